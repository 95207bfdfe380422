package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

// RestartAPIServer kills kube-apiserver with SIGKILL, as a crash or the OOM killer ends it, starts
// it again with the same command line, its output appended to the same log, and returns once its
// /readyz answers ok, with how long it was down. etcd keeps running, so nothing stored is lost;
// every client loses its connections and watches.
func (c *Cluster) RestartAPIServer(ctx context.Context) (time.Duration, error) {
	pids := c.apiServerProcesses()
	if len(pids) != 1 {
		return 0, fmt.Errorf("want one kube-apiserver of the cluster in %s, found %v", c.Dir, pids)
	}
	args, err := commandLine(pids[0])
	if err != nil {
		return 0, fmt.Errorf("reading the command line of kube-apiserver: %w", err)
	}
	killed := time.Now()
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("killing kube-apiserver: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, pollInterval, stopGrace, true, func(context.Context) (bool, error) {
		return len(c.apiServerProcesses()) == 0, nil
	})
	switch {
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case err != nil:
		return 0, fmt.Errorf("kube-apiserver %d did not exit after SIGKILL", pids[0])
	}
	// Its port is in the ephemeral range: a client reconnecting meanwhile can be given it as its
	// own port, or connect to itself on it, until it gives up. Then a new start binds.
	var startErr error
	err = wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 200 * time.Millisecond, Steps: apiServerStartAttempts},
		func(ctx context.Context) (bool, error) {
			startErr = c.startAPIServerAgain(ctx, args)
			exitedAtOnce := c.apiServer != nil && c.apiServer.exited() != nil
			if startErr != nil && !exitedAtOnce {
				return false, startErr
			}
			return startErr == nil, nil
		})
	switch {
	case err == nil:
		return time.Since(killed), nil
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case startErr != nil:
		return 0, startErr
	}
	return 0, err
}

// apiServerStartAttempts bounds the starts of kube-apiserver that exit at once.
const apiServerStartAttempts = 10

// startAPIServerAgain runs kube-apiserver with args, its output appended to its log, and waits
// until it is ready.
func (c *Cluster) startAPIServerAgain(ctx context.Context, args []string) error {
	if c.apiServer != nil {
		_ = c.apiServer.stop(stopGrace)
	}
	logFile, err := os.OpenFile(c.logPath("kube-apiserver"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// Like every child, and unlike envtest's own, it dies with this process.
	c.apiServer, err = startChildLogging("kube-apiserver", args[0], args[1:], nil, logFile)
	if err != nil {
		_ = logFile.Close()
		return err
	}
	return c.waitAPIServerReady(ctx)
}

// apiServerProcesses finds kube-apiserver by the certificate directory envtest passes it.
func (c *Cluster) apiServerProcesses() []int {
	certDir := "--cert-dir=" + c.certDir()
	return processes(func(_ int, args []string) bool {
		return filepath.Base(args[0]) == "kube-apiserver" && slices.Contains(args, certDir)
	})
}

// etcdProcesses finds etcd by the data directory envtest passes it.
func (c *Cluster) etcdProcesses() []int {
	dataDir := "--data-dir=" + c.etcdDir()
	return processes(func(_ int, args []string) bool {
		return filepath.Base(args[0]) == "etcd" && slices.Contains(args, dataDir)
	})
}

// waitAPIServerReady polls /readyz, as the cluster's admin, until it answers ok.
func (c *Cluster) waitAPIServerReady(ctx context.Context) error {
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return err
	}
	url := strings.TrimSuffix(c.Config.Host, "/") + "/readyz"
	return c.waitFor(ctx, "kube-apiserver to be ready again", c.logPath("kube-apiserver"), answersOK(hc, url))
}

// PauseEtcd stops etcd with SIGSTOP, as a frozen disk or a starved machine stalls it: kube-apiserver
// keeps serving what it has cached, but its writes and quorum reads wait. ResumeEtcd ends the pause;
// Stop does too.
func (c *Cluster) PauseEtcd() error {
	if err := c.signalEtcd(syscall.SIGSTOP); err != nil {
		return err
	}
	// The signal only marks etcd's threads: each stops when it next leaves the kernel, and a
	// write sent before the last one has stopped could still be served.
	pid := c.etcdProcesses()[0]
	return wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return allThreadsStopped(pid) })
}

// allThreadsStopped tells whether every thread of process pid is stopped by a signal.
func allThreadsStopped(pid int) (bool, error) {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return false, err
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "stat"))
		if err != nil {
			return false, err
		}
		// The state follows the command name, which is in parentheses and may hold spaces.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) == 0 || fields[0] != "T" {
			return false, nil
		}
	}
	return true, nil
}

// ResumeEtcd lets a paused etcd run again with SIGCONT.
func (c *Cluster) ResumeEtcd() error { return c.signalEtcd(syscall.SIGCONT) }

func (c *Cluster) signalEtcd(sig syscall.Signal) error {
	pids := c.etcdProcesses()
	if len(pids) != 1 {
		return fmt.Errorf("want one etcd of the cluster in %s, found %v", c.Dir, pids)
	}
	if err := syscall.Kill(pids[0], sig); err != nil {
		return fmt.Errorf("sending %s to etcd: %w", sig, err)
	}
	return nil
}
