package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/operatorproc"
)

// serverWrites reads from the API server's metrics the writes only the operator makes: server-side
// applies of any resource and updates of appkeeper resources, by verb and resource; and the
// histogram of the time the API server took to answer them.
func (b *bench) serverWrites(ctx context.Context) (map[string]float64, *operatorproc.Snapshot, error) {
	raw, err := b.cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, err
	}
	writes := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		verb, group := operatorproc.Label(m, "verb"), operatorproc.Label(m, "group")
		if operatorproc.Label(m, "code") == "409" && (verb == "APPLY" || group == appsv1alpha1.GroupVersion.Group || operatorproc.Label(m, "resource") == "events") {
			// Conflicts of the requests the operator makes, to tell which one met a 409.
			writes["409 "+strings.ToLower(verb)+" "+operatorproc.Label(m, "resource")] += m.GetCounter().GetValue()
		}
		if !operatorWrite(m) {
			continue
		}
		resource := operatorproc.Label(m, "resource")
		if sub := operatorproc.Label(m, "subresource"); sub != "" {
			resource += "/" + sub
		}
		writes[strings.ToLower(verb)+" "+resource] += m.GetCounter().GetValue()
	}
	latency := &operatorproc.Snapshot{Buckets: map[float64]float64{}}
	for _, m := range families["apiserver_request_duration_seconds"].GetMetric() {
		if !operatorWrite(m) {
			continue
		}
		for _, bucket := range m.GetHistogram().GetBucket() {
			latency.Buckets[bucket.GetUpperBound()] += float64(bucket.GetCumulativeCount())
		}
	}
	return writes, latency, nil
}

// operatorWrite tells whether an API server metric counts requests only the operator makes. The
// benchmark itself creates the custom resources; the operator creates its own (a WordPress's
// MySQL) by apply. kwok applies too, the volumes it provisions for claims, which the operator
// never writes.
func operatorWrite(m *dto.Metric) bool {
	verb, group := operatorproc.Label(m, "verb"), operatorproc.Label(m, "group")
	if operatorproc.Label(m, "resource") == "persistentvolumes" {
		return false
	}
	return verb == "APPLY" || (group == appsv1alpha1.GroupVersion.Group && isWrite(verb) && verb != "POST")
}

func isWrite(verb string) bool {
	switch verb {
	case "POST", "PUT", "PATCH", "DELETE", "APPLY":
		return true
	}
	return false
}

// operatorEvents counts the Events the operator has reported in ns.
func (b *bench) operatorEvents(ctx context.Context, ns string) (float64, error) {
	list := &eventsv1.EventList{}
	if err := b.c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	count := 0.0
	for _, e := range list.Items {
		if e.ReportingController == operator.Name {
			count++
		}
	}
	return count, nil
}
