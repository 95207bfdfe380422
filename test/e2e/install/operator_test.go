//go:build e2e

package install

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

	"github.com/appkeeper/appkeeper/internal/testutil"
)

// operatorProcess is bin/appkeeper run beside the cluster, as one replica of the manager
// Deployment would run in it.
type operatorProcess struct {
	name       string
	cmd        *exec.Cmd
	logPath    string
	metricsURL string
	exited     chan struct{}
}

// impersonatingKubeconfig writes a copy of the cluster's kubeconfig whose user acts as the
// ServiceAccount subject, so that every request the operator makes is authorized by the installed
// RBAC alone.
func impersonatingKubeconfig(t *testing.T, user string) string {
	t.Helper()
	config, err := clientcmd.LoadFromFile(cluster.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range config.AuthInfos {
		auth.Impersonate = user
	}
	path := filepath.Join(cluster.Dir, "kubeconfig-"+strings.ReplaceAll(user, ":", "-"))
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// startOperator runs bin/appkeeper with the given kubeconfig and waits until its health endpoint
// answers, which it does before leader election, on standby too.
func startOperator(t *testing.T, name, kubeconfig string, args ...string) *operatorProcess {
	t.Helper()
	binary, err := filepath.Abs(filepath.Join(root, "bin", "appkeeper"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("%v: run make build", err)
	}
	metricsPort, probePort := testutil.FreePort(t), testutil.FreePort(t)
	p := &operatorProcess{
		name:       name,
		logPath:    filepath.Join(cluster.Dir, "logs", name+".log"),
		metricsURL: fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort),
		exited:     make(chan struct{}),
	}
	logFile, err := os.Create(p.logPath)
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
	t.Cleanup(func() { p.stop(t) })
	healthz := fmt.Sprintf("http://127.0.0.1:%d/healthz", probePort)
	testutil.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		select {
		case <-p.exited:
			return errors.New(name + " exited: see " + p.logPath)
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
	return p
}

// stop sends SIGTERM, as the kubelet does, and waits for the process to end; it kills it after
// 15 s. It may be called again.
func (p *operatorProcess) stop(t *testing.T) {
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
		t.Errorf("%s did not stop within 15 s of SIGTERM: see %s", p.name, p.logPath)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// scrape reads the secure metrics endpoint with a bearer token and returns the HTTP status. The
// operator serves a self-signed certificate.
func (p *operatorProcess) scrape(t *testing.T, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.metricsURL, nil)
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

func (p *operatorProcess) log(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
