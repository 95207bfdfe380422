package operatorproc

import (
	"context"
	"io"
	"math"
	"net/http"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot holds the counters read from the operator's metrics at one moment.
type Snapshot struct {
	// Requests counts the operator's requests to the API server by HTTP method.
	Requests map[string]float64
	// Conflicts counts the responses with code 409.
	Conflicts  float64
	Reconciles float64
	// ReconcilesBy counts the reconciles by controller.
	ReconcilesBy map[string]float64
	// Buckets is the reconcile time histogram, cumulative by upper bound.
	Buckets map[float64]float64
	// HeapInuse is the bytes in in-use heap spans.
	HeapInuse float64
	// Leader is true when the process holds the leader election lease.
	Leader bool
}

// NewSnapshot is an empty snapshot, every counter at zero.
func NewSnapshot() *Snapshot {
	return &Snapshot{Requests: map[string]float64{}, ReconcilesBy: map[string]float64{}, Buckets: map[float64]float64{}}
}

func readMetrics(ctx context.Context, url string) (*Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	return ParseMetrics(resp.Body)
}

// ParseMetrics reads the Prometheus text format the operator serves.
func ParseMetrics(r io.Reader) (*Snapshot, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	s := NewSnapshot()
	for _, m := range families["rest_client_requests_total"].GetMetric() {
		method, code := Label(m, "method"), Label(m, "code")
		s.Requests[method] += m.GetCounter().GetValue()
		if code == "409" {
			s.Conflicts += m.GetCounter().GetValue()
		}
	}
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		s.Reconciles += m.GetCounter().GetValue()
		s.ReconcilesBy[Label(m, "controller")] += m.GetCounter().GetValue()
	}
	for _, m := range families["go_memstats_heap_inuse_bytes"].GetMetric() {
		s.HeapInuse += m.GetGauge().GetValue()
	}
	for _, m := range families["controller_runtime_reconcile_time_seconds"].GetMetric() {
		for _, b := range m.GetHistogram().GetBucket() {
			s.Buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
	}
	for _, m := range families["leader_election_master_status"].GetMetric() {
		if m.GetGauge().GetValue() == 1 {
			s.Leader = true
		}
	}
	return s, nil
}

// Label is the value of the label name of m, empty when m has none.
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Writes counts the requests that change something.
func (s *Snapshot) Writes() float64 {
	return s.Requests["POST"] + s.Requests["PUT"] + s.Requests["PATCH"] + s.Requests["DELETE"]
}

// add adds the counters of o to s: the counts of a process that ended, to those of the next.
func (s *Snapshot) add(o *Snapshot) {
	for k, v := range o.Requests {
		s.Requests[k] += v
	}
	for k, v := range o.ReconcilesBy {
		s.ReconcilesBy[k] += v
	}
	for k, v := range o.Buckets {
		s.Buckets[k] += v
	}
	s.Conflicts += o.Conflicts
	s.Reconciles += o.Reconciles
}

// Quantile estimates the q-quantile of the reconciles between before and s, interpolating within
// the histogram bucket the way Prometheus's histogram_quantile does.
func (s *Snapshot) Quantile(before *Snapshot, q float64) float64 {
	bounds := make([]float64, 0, len(s.Buckets))
	for b := range s.Buckets {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 {
		return 0
	}
	total := s.Buckets[bounds[len(bounds)-1]] - before.Buckets[bounds[len(bounds)-1]]
	if total == 0 {
		return 0
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range bounds {
		count := s.Buckets[b] - before.Buckets[b]
		if count >= rank {
			if math.IsInf(b, 1) {
				// Beyond the last finite bucket, as Prometheus answers: its upper bound.
				return lower
			}
			if count == below {
				return b
			}
			return lower + (b-lower)*(rank-below)/(count-below)
		}
		lower, below = b, count
	}
	return bounds[len(bounds)-1]
}
