// Package operatorproc runs the appkeeper binary out of process, as a Deployment's pod runs it:
// its memory and CPU are its own, it can be killed, and its metrics are read over plain HTTP the
// way Prometheus reads them. The benchmark and the fault suite share it.
package operatorproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/appkeeper/appkeeper/internal/localcluster"
)

// Options say how to run the operator.
type Options struct {
	// Binary is the appkeeper executable.
	Binary string
	// Kubeconfig is the cluster the operator works on.
	Kubeconfig string
	// LogPath receives the operator's output.
	LogPath string
	// Profile serves pprof on a free port, for SaveProfile.
	Profile bool
	// Args are further flags.
	Args []string
	// Standby is set when the operator runs with --leader-elect: a replica that does not lead
	// starts no controller, so Start waits for its metrics endpoint alone.
	Standby bool
}

// startTimeout bounds the wait for the metrics endpoint and the controllers.
const startTimeout = time.Minute

// Process is one run of the operator.
type Process struct {
	cmd        *exec.Cmd
	done       chan struct{}
	metricsURL string
	// pprofURL is the base of the profiling endpoint, empty when profiling is off.
	pprofURL string
	// opts are the options it runs with, its listeners' flags included, to run it again.
	opts Options
	// logOffset is the size of the log when the process started, where its own lines begin.
	logOffset int64
}

// Start runs the operator with plain-HTTP metrics on a free port and returns once its metrics
// answer and every controller has started its workers (its metrics alone with Standby).
func Start(ctx context.Context, o Options) (*Process, error) {
	port, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", port), "--metrics-secure=false",
		"--health-probe-bind-address", "0",
	}
	pprofURL := ""
	if o.Profile {
		pprofPort, err := localcluster.FreePort()
		if err != nil {
			return nil, err
		}
		args = append(args, "--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", pprofPort))
		pprofURL = fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/", pprofPort)
	}
	o.Args = append(args, o.Args...)
	logFile, err := os.Create(o.LogPath)
	if err != nil {
		return nil, err
	}
	p, err := launch(o, logFile)
	if err != nil {
		return nil, err
	}
	p.pprofURL = pprofURL
	if err := p.waitReady(ctx); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// launch starts the operator with o.Args as they are, its output appended to logFile, which it
// closes.
func launch(o Options, logFile *os.File) (*Process, error) {
	info, err := logFile.Stat()
	if err != nil {
		_ = logFile.Close()
		return nil, err
	}
	metricsURL := ""
	for i, arg := range o.Args {
		if arg == "--metrics-bind-address" && i+1 < len(o.Args) {
			metricsURL = "http://" + o.Args[i+1] + "/metrics"
		}
	}
	cmd := exec.Command(o.Binary, o.Args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+o.Kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	_ = logFile.Close()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), metricsURL: metricsURL, opts: o, logOffset: info.Size()}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// waitReady returns once the metrics answer and, unless the process is a standby, its own part of
// the log tells that every controller has started.
func (p *Process) waitReady(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		if _, err := p.Metrics(ctx); err == nil && (p.opts.Standby || controllersStarted(p.opts.LogPath, p.logOffset)) {
			return true, nil
		}
		select {
		case <-p.done:
			return false, fmt.Errorf("the operator exited while starting: see %s", p.opts.LogPath)
		default:
			return false, nil
		}
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("the operator's metrics or controllers did not come up: see %s", p.opts.LogPath)
	}
	return err
}

var controllerField = regexp.MustCompile(`"controller":"([^"]+)"`)

// controllersStarted tells from the operator's log, read from offset on, whether every controller
// that began starting has filled its caches and started its workers, which controller-runtime logs
// only after the sync.
func controllersStarted(logPath string, offset int64) bool {
	f, err := os.Open(logPath)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return false
	}
	raw, err := io.ReadAll(f)
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

// Stop sends SIGTERM, as the kubelet does, and kills the process if it has not ended within 15 s.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill sends SIGKILL and returns once the process has ended.
func (p *Process) Kill() {
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return
	}
	<-p.done
}

// Done is closed once the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogPath is the file the process writes its log to.
func (p *Process) LogPath() string { return p.opts.LogPath }

// Metrics reads the operator's metrics.
func (p *Process) Metrics(ctx context.Context) (*Snapshot, error) {
	return readMetrics(ctx, p.metricsURL)
}

// SaveProfile writes the profile at path under the pprof endpoint (for example "heap" or
// "profile?seconds=30") to file; it does nothing when profiling is off.
func (p *Process) SaveProfile(ctx context.Context, path, file string) error {
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
	defer func() { _ = resp.Body.Close() }()
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

// Usage is the process's resident memory in MiB and CPU time in seconds, from /proc.
func (p *Process) Usage() (rssMiB, cpuSeconds float64, err error) {
	return ProcessUsage(p.cmd.Process.Pid)
}

// ProcessUsage is the resident memory in MiB and CPU time in seconds of process pid, from /proc.
func ProcessUsage(pid int) (rssMiB, cpuSeconds float64, err error) {
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
