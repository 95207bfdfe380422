package testservers

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// Prometheus and Promtool are the binaries "make prometheus" builds, relative to the repository's
// root; the version must match PROMETHEUS_VERSION in the Makefile.
const (
	Prometheus = "bin/prometheus-v0.316.0/prometheus"
	Promtool   = "bin/prometheus-v0.316.0/promtool"
)

// PrometheusOptions say how a Prometheus server starts.
type PrometheusOptions struct {
	// Binary is prometheus.
	Binary string
	// Dir receives its configuration, rule files, database and log.
	Dir string
	// Interval is how often it scrapes and evaluates rules; 1 s when zero.
	Interval time.Duration
	// Targets are scraped, one job each.
	Targets []ScrapeTarget
	// RuleFiles are Prometheus rule files (groups:), by file name.
	RuleFiles map[string][]byte
}

// ScrapeTarget is one metrics endpoint to scrape, as a job of its own.
type ScrapeTarget struct {
	// Job is the job label of its series, as a ServiceMonitor names it after its Service.
	Job string
	// URL is the endpoint, e.g. https://127.0.0.1:8443/metrics.
	URL string
	// BearerToken, when set, authenticates the scrapes.
	BearerToken string
	// InsecureSkipVerify accepts any certificate, such as one the server signed itself.
	InsecureSkipVerify bool
	// CAFile, when set, is the authority the server's certificate must come from, and ServerName
	// the name it must hold.
	CAFile, ServerName string
	// HonorLabels keeps the labels of the scraped series over the target's.
	HonorLabels bool
}

// PrometheusServer is a running Prometheus.
type PrometheusServer struct {
	// URL is its HTTP API's base, http://127.0.0.1:<port>.
	URL     string
	LogPath string
	API     promv1.API
	cmd     *exec.Cmd
	exited  chan struct{}
}

// StartPrometheus writes the configuration and rule files into o.Dir, starts Prometheus on a free
// port of 127.0.0.1 and waits until it is ready.
func StartPrometheus(ctx context.Context, o PrometheusOptions) (_ *PrometheusServer, err error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	config, err := prometheusConfig(o)
	if err != nil {
		return nil, err
	}
	configPath := filepath.Join(o.Dir, "prometheus.yaml")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		return nil, err
	}
	port, err := FreePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	address := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	s := &PrometheusServer{URL: "http://" + address, LogPath: filepath.Join(o.Dir, "prometheus.log"), exited: make(chan struct{})}
	logFile, err := os.Create(s.LogPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	s.cmd = exec.Command(o.Binary, "--config.file="+configPath, "--storage.tsdb.path="+filepath.Join(o.Dir, "data"),
		"--web.listen-address="+address)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	client, err := api.NewClient(api.Config{Address: s.URL})
	if err != nil {
		return nil, err
	}
	s.API = promv1.NewAPI(client)
	return s, s.waitReady(ctx, 30*time.Second)
}

func tlsConfig(target ScrapeTarget) map[string]any {
	config := map[string]any{"insecure_skip_verify": target.InsecureSkipVerify}
	if target.CAFile != "" {
		config["ca_file"] = target.CAFile
	}
	if target.ServerName != "" {
		config["server_name"] = target.ServerName
	}
	return config
}

// prometheusConfig is the configuration file of o; the rule files are written beside it.
func prometheusConfig(o PrometheusOptions) ([]byte, error) {
	interval := o.Interval
	if interval == 0 {
		interval = time.Second
	}
	var ruleFiles []string
	for name, data := range o.RuleFiles {
		path := filepath.Join(o.Dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
		ruleFiles = append(ruleFiles, path)
	}
	var jobs []map[string]any
	for _, target := range o.Targets {
		u, err := url.Parse(target.URL)
		if err != nil {
			return nil, err
		}
		job := map[string]any{
			"job_name":       target.Job,
			"scheme":         u.Scheme,
			"metrics_path":   u.Path,
			"honor_labels":   target.HonorLabels,
			"static_configs": []any{map[string]any{"targets": []string{u.Host}}},
			"tls_config":     tlsConfig(target),
		}
		if target.BearerToken != "" {
			job["authorization"] = map[string]any{"credentials": target.BearerToken}
		}
		jobs = append(jobs, job)
	}
	return yaml.Marshal(map[string]any{
		"global":         map[string]any{"scrape_interval": interval.String(), "evaluation_interval": interval.String()},
		"rule_files":     ruleFiles,
		"scrape_configs": jobs,
	})
}

// waitReady waits until Prometheus answers that it is ready, within timeout.
func (s *PrometheusServer) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("prometheus exited: see %s", s.LogPath)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("prometheus not ready within %s: see %s", timeout, s.LogPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Query evaluates an instant query now and returns its samples.
func (s *PrometheusServer) Query(ctx context.Context, expr string) (model.Vector, error) {
	value, _, err := s.API.Query(ctx, expr, time.Now())
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	vector, ok := value.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s returned a %s, not a vector", expr, value.Type())
	}
	return vector, nil
}

// Alerts returns the alerts of the given name, pending or firing.
func (s *PrometheusServer) Alerts(ctx context.Context, name string) ([]promv1.Alert, error) {
	result, err := s.API.Alerts(ctx)
	if err != nil {
		return nil, err
	}
	var alerts []promv1.Alert
	for _, alert := range result.Alerts {
		if string(alert.Labels[model.AlertNameLabel]) == name {
			alerts = append(alerts, alert)
		}
	}
	return alerts, nil
}

// RuleHealth returns, by rule name, "ok" or the error of the last evaluation of each loaded alerting
// and recording rule; rules of one name share an entry, the worst one's.
func (s *PrometheusServer) RuleHealth(ctx context.Context) (map[string]string, error) {
	result, err := s.API.Rules(ctx)
	if err != nil {
		return nil, err
	}
	health := map[string]string{}
	note := func(name string, h promv1.RuleHealth, lastError string) {
		switch {
		case h != promv1.RuleHealthGood:
			health[name] = fmt.Sprintf("%s: %s", h, lastError)
		case health[name] == "":
			health[name] = string(h)
		}
	}
	for _, group := range result.Groups {
		for _, rule := range group.Rules {
			switch r := rule.(type) {
			case promv1.AlertingRule:
				note(r.Name, r.Health, r.LastError)
			case promv1.RecordingRule:
				note(r.Name, r.Health, r.LastError)
			}
		}
	}
	return health, nil
}

// Stop sends SIGTERM, and kills Prometheus if it has not stopped 10 s later.
func (s *PrometheusServer) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}
