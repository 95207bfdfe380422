package apiserverwait_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// controlPlane is etcd and a kube-apiserver that a test may kill and start again, as a kubelet
// restarts a crashed static pod: the same command line, so the same port, certificates and etcd.
type controlPlane struct {
	admin *rest.Config
	// args is kube-apiserver's command line, read from the process envtest started.
	args []string
	// pid is the running kube-apiserver; restarted is set once this test started it, and
	// stopRestarted stops it.
	pid           int
	restarted     *exec.Cmd
	stopRestarted context.CancelFunc
	logPath       string
}

// startControlPlane starts etcd and kube-apiserver through envtest, with the CRDs in crdDirs.
func startControlPlane(t *testing.T, crdDirs ...string) *controlPlane {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set")
	}
	logPath := filepath.Join(t.TempDir(), "kube-apiserver.log")
	env := &envtest.Environment{CRDDirectoryPaths: crdDirs, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	pid, args, err := findAPIServer(env.ControlPlane.APIServer.CertDir)
	if err != nil {
		t.Fatal(err)
	}
	c := &controlPlane{admin: cfg, args: args, pid: pid, logPath: logPath}
	// Runs before envtest stops etcd, which a kube-apiserver of this test's own must not outlive.
	t.Cleanup(c.stop)
	return c
}

// findAPIServer is the kube-apiserver process whose command line names certDir, envtest's folder
// of this test.
func findAPIServer(certDir string) (int, []string, error) {
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, nil, err
	}
	for _, path := range procs {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) != "kube-apiserver" || !bytes.Contains(raw, []byte("--cert-dir="+certDir+"\x00")) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		return pid, args, err
	}
	return 0, nil, errors.New("no kube-apiserver process with --cert-dir=" + certDir)
}

// killAPIServer kills kube-apiserver and returns once it is gone.
func (c *controlPlane) killAPIServer(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(c.pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill kube-apiserver: %v", err)
	}
	if c.restarted != nil {
		_ = c.restarted.Wait()
		c.stopRestarted()
		c.restarted = nil
		return
	}
	// envtest waits for the process it started, which reaps it.
	if wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return syscall.Kill(c.pid, 0) != nil, nil
	}) != nil {
		t.Fatalf("kube-apiserver %d still there 10 s after SIGKILL", c.pid)
	}
}

// startAPIServer starts kube-apiserver again with its command line and returns when it is ready.
func (c *controlPlane) startAPIServer(t *testing.T) time.Time {
	t.Helper()
	log, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = log.Close() }()
	ctx, stop := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		stop()
		t.Fatalf("start kube-apiserver: %v", err)
	}
	c.pid, c.restarted, c.stopRestarted = cmd.Process.Pid, cmd, stop
	return c.waitReady(t)
}

// waitReady polls /readyz and returns the moment it first answered ok.
func (c *controlPlane) waitReady(t *testing.T) time.Time {
	t.Helper()
	clientset, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		t.Fatal(err)
	}
	if wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		probe, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		err = clientset.Discovery().RESTClient().Get().AbsPath("/readyz").Do(probe).Error()
		return err == nil, nil
	}) != nil {
		t.Fatalf("kube-apiserver not ready within a minute of its start: %v", err)
	}
	return time.Now()
}

// stop stops the kube-apiserver this test started, if any: SIGTERM, then SIGKILL after 10 s.
func (c *controlPlane) stop() {
	if c.restarted == nil {
		return
	}
	c.stopRestarted()
	_ = c.restarted.Wait()
}

// restartAPIServer kills kube-apiserver, leaves it down for downtime, starts it again and returns
// when it is ready.
func (c *controlPlane) restartAPIServer(t *testing.T, downtime time.Duration) time.Time {
	t.Helper()
	c.killAPIServer(t)
	time.Sleep(downtime)
	return c.startAPIServer(t)
}
