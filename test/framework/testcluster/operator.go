package testcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/appkeeper/appkeeper/test/framework/await"
)

// OperatorProcess is bin/appkeeper run beside a cluster, as one replica of the manager Deployment
// would run in it.
type OperatorProcess struct {
	Name       string
	LogPath    string
	MetricsURL string
	cmd        *exec.Cmd
	exited     chan struct{}
}

// ImpersonatingKubeconfig writes, beside kubeconfig, a copy whose user acts as the given subject
// (system:serviceaccount:<namespace>:<name>), so that every request made with it is authorized by
// that subject's RBAC alone.
func ImpersonatingKubeconfig(t *testing.T, kubeconfig, user string) string {
	t.Helper()
	config, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range config.AuthInfos {
		auth.Impersonate = user
	}
	path := filepath.Join(filepath.Dir(kubeconfig), "kubeconfig-"+strings.ReplaceAll(user, ":", "-"))
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// StartOperator runs the repository's bin/appkeeper with the given kubeconfig and arguments, its
// log in logDir/<name>.log, and waits until its health endpoint answers, which it does before
// leader election, on standby too. The test's cleanup stops it.
func StartOperator(t *testing.T, name, kubeconfig, logDir string, args ...string) *OperatorProcess {
	t.Helper()
	binary := RepoBinary("appkeeper")
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("%v: run make build", err)
	}
	metricsPort, probePort := FreePort(t), FreePort(t)
	p := &OperatorProcess{
		Name:       name,
		LogPath:    filepath.Join(logDir, name+".log"),
		MetricsURL: fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort),
		exited:     make(chan struct{}),
	}
	logFile, err := os.Create(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logFile.Close() })
	p.cmd = exec.Command(binary, append([]string{
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metricsPort),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probePort),
	}, args...)...)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.Stop(t) })
	p.waitHealthy(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", probePort))
	return p
}

func (p *OperatorProcess) waitHealthy(t *testing.T, healthz string) {
	t.Helper()
	await.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		select {
		case <-p.exited:
			return errors.New(p.Name + " exited: see " + p.LogPath)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthz, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", healthz, resp.Status)
		}
		return nil
	})
}

// Stop sends SIGTERM, as the kubelet does, and waits for the process to end; it kills it after
// 15 s. It may be called again.
func (p *OperatorProcess) Stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		t.Errorf("%s did not stop within 15 s of SIGTERM: see %s", p.Name, p.LogPath)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Scrape reads the secure metrics endpoint with a bearer token and returns the HTTP status. The
// operator serves a self-signed certificate.
func (p *OperatorProcess) Scrape(t *testing.T, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.MetricsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a self-signed certificate on localhost
	resp, err := insecure.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Log is what the process has logged so far.
func (p *OperatorProcess) Log(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// RefusedRequests are the lines of the process's log that tell of a request the API server
// forbade: whatever its RBAC forgot and no condition shows (an event, a lease update).
func (p *OperatorProcess) RefusedRequests(t *testing.T) []string {
	t.Helper()
	var refused []string
	for _, line := range strings.Split(p.Log(t), "\n") {
		if strings.Contains(line, "forbidden") {
			refused = append(refused, line)
		}
	}
	return refused
}
