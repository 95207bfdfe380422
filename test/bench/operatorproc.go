package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/appkeeper/appkeeper/internal/localcluster"
)

// operatorProcess is bin/appkeeper run out of process, so that its memory and CPU are its own and
// its metrics are read the way Prometheus reads them.
type operatorProcess struct {
	cmd        *exec.Cmd
	metricsURL string
	// pprofURL is the base of the profiling endpoint, empty when profiling is off.
	pprofURL string
}

func startOperator(ctx context.Context, binary, kubeconfig, logPath string, profile bool, extraArgs []string) (*operatorProcess, error) {
	port, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", port), "--metrics-secure=false",
		"--health-probe-bind-address", "0",
	}
	pprofURL := ""
	if profile {
		pprofPort, err := localcluster.FreePort()
		if err != nil {
			return nil, err
		}
		args = append(args, "--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", pprofPort))
		pprofURL = fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", pprofPort)
	}
	args = append(args, extraArgs...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	p := &operatorProcess{cmd: cmd, metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", port), pprofURL: pprofURL}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := p.metrics(ctx); err == nil && controllersStarted(logPath) {
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("the operator's metrics or controllers did not come up: see %s", logPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var controllerField = regexp.MustCompile(`"controller":"([^"]+)"`)

// controllersStarted tells from the operator's log whether every controller that began starting has
// filled its caches and started its workers, which controller-runtime logs only after the sync.
func controllersStarted(logPath string) bool {
	raw, err := os.ReadFile(logPath)
	if err != nil {
		return false
	}
	starting, started := map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		m := controllerField.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch {
		case strings.Contains(line, "Starting EventSource"):
			starting[m[1]] = true
		case strings.Contains(line, "Starting workers"):
			started[m[1]] = true
		}
	}
	if len(starting) == 0 {
		return false
	}
	for name := range starting {
		if !started[name] {
			return false
		}
	}
	return true
}

func (p *operatorProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// saveProfile writes the profile at path under the pprof endpoint (for example "heap" or
// "profile?seconds=30") to file; it does nothing when profiling is off.
func (p *operatorProcess) saveProfile(ctx context.Context, path, file string) error {
	if p.pprofURL == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.pprofURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", path, resp.Status)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// usage is the process's resident memory in MiB and CPU time in seconds, from /proc.
func (p *operatorProcess) usage() (rssMiB, cpuSeconds float64, err error) {
	return processUsage(p.cmd.Process.Pid)
}

// processUsage is the resident memory in MiB and CPU time in seconds of process pid, from /proc.
func processUsage(pid int) (rssMiB, cpuSeconds float64, err error) {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "VmRSS:" {
			kib, _ := strconv.ParseFloat(fields[1], 64)
			rssMiB = kib / 1024
		}
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	const clockTicks = 100 // USER_HZ on Linux
	return rssMiB, (utime + stime) / clockTicks, nil
}

// snapshot holds the counters the benchmark reads from the operator's metrics.
type snapshot struct {
	requests   map[string]float64 // by HTTP method
	conflicts  float64            // responses with code 409
	reconciles float64
	// reconcilesBy counts the reconciles by controller.
	reconcilesBy map[string]float64
	buckets      map[float64]float64 // reconcile time histogram, cumulative by upper bound
	heapInuse    float64             // bytes in in-use heap spans
}

func (p *operatorProcess) metrics(ctx context.Context) (*snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.metricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

func parseMetrics(r io.Reader) (*snapshot, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	s := &snapshot{requests: map[string]float64{}, reconcilesBy: map[string]float64{}, buckets: map[float64]float64{}}
	for _, m := range families["rest_client_requests_total"].GetMetric() {
		method, code := label(m, "method"), label(m, "code")
		s.requests[method] += m.GetCounter().GetValue()
		if code == "409" {
			s.conflicts += m.GetCounter().GetValue()
		}
	}
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		s.reconciles += m.GetCounter().GetValue()
		s.reconcilesBy[label(m, "controller")] += m.GetCounter().GetValue()
	}
	for _, m := range families["go_memstats_heap_inuse_bytes"].GetMetric() {
		s.heapInuse += m.GetGauge().GetValue()
	}
	for _, m := range families["controller_runtime_reconcile_time_seconds"].GetMetric() {
		for _, b := range m.GetHistogram().GetBucket() {
			s.buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
		}
	}
	return s, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// writes counts the requests that change something.
func (s *snapshot) writes() float64 {
	return s.requests["POST"] + s.requests["PUT"] + s.requests["PATCH"] + s.requests["DELETE"]
}

// quantile estimates the q-quantile of the reconciles between before and s, interpolating within
// the histogram bucket the way Prometheus's histogram_quantile does.
func (s *snapshot) quantile(before *snapshot, q float64) float64 {
	bounds := make([]float64, 0, len(s.buckets))
	for b := range s.buckets {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 {
		return 0
	}
	total := s.buckets[bounds[len(bounds)-1]] - before.buckets[bounds[len(bounds)-1]]
	if total == 0 {
		return 0
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range bounds {
		count := s.buckets[b] - before.buckets[b]
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
