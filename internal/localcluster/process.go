package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// child is a component process started by this package, logging to its own file.
type child struct {
	name       string
	logPath    string
	healthPort int
	cmd        *exec.Cmd
	logFile    *os.File
	done       chan struct{}
	waitErr    error // set before done is closed
}

func startChild(name, bin string, args, env []string, logPath string) (*child, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", logPath, err)
	}
	return startChildLogging(name, bin, args, env, f)
}

// startChildLogging starts a child whose output goes to f, which is closed when the child is stopped.
func startChildLogging(name, bin string, args, env []string, f *os.File) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A terminal's Ctrl-C reaches only the parent, which then stops the cluster in order.
		Setpgid: true,
		// If the parent dies without calling Stop, the child dies with it.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	ch := &child{name: name, logPath: f.Name(), cmd: cmd, logFile: f, done: make(chan struct{})}
	go func() {
		ch.waitErr = cmd.Wait()
		close(ch.done)
	}()
	return ch, nil
}

// exited reports, once the process has ended, which one it was and where its log is.
func (ch *child) exited() error {
	select {
	case <-ch.done:
		return fmt.Errorf("%s exited (%w): see %s", ch.name, ch.waitErr, ch.logPath)
	default:
		return nil
	}
}

func (ch *child) stop(grace time.Duration) error {
	defer func() { _ = ch.logFile.Close() }()
	select {
	case <-ch.done:
		return nil
	default:
	}
	if err := ch.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping %s: %w", ch.name, err)
	}
	select {
	case <-ch.done:
		return nil
	case <-time.After(grace):
	}
	if err := ch.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing %s: %w", ch.name, err)
	}
	<-ch.done
	return nil
}

// stopChildren stops the children side by side, so stopping takes one grace period at most.
func stopChildren(children []*child) []error {
	errs := make([]error, len(children))
	var wg sync.WaitGroup
	for i, ch := range children {
		wg.Go(func() { errs[i] = ch.stop(stopGrace) })
	}
	wg.Wait()
	return errs
}

// FreePort is a TCP port on the loopback interface that nothing listens on at the moment.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// processes lists the live processes for which match, given the parent and the command
// line, returns true.
func processes(match func(ppid int, args []string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procStat(pid)
		if !ok || state == "Z" {
			continue
		}
		args, err := commandLine(pid)
		if err != nil {
			continue
		}
		if match(ppid, args) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// commandLine is the arguments of process pid, from /proc/<pid>/cmdline.
func commandLine(pid int) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), nil
}

// procStat reads the parent and the state of pid from /proc/<pid>/stat.
func procStat(pid int) (ppid int, state string, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", false
	}
	// The command name is in parentheses and may itself contain spaces or parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, "", false
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0], err == nil
}

// envtestProcesses finds etcd and kube-apiserver of the cluster in Dir by the directories
// envtest passes them. Unlike the other components they are started without Pdeathsig, so
// they outlive a parent that is killed, and envtest does not wait for them when it gives up
// on stopping them.
func (c *Cluster) envtestProcesses() []int {
	dataDir, certDir := "--data-dir="+c.etcdDir(), "--cert-dir="+c.certDir()
	return processes(func(_ int, args []string) bool {
		return slices.Contains(args, dataDir) || slices.Contains(args, certDir)
	})
}

// killEnvtestProcesses kills what envtestProcesses finds and waits for it to go.
func (c *Cluster) killEnvtestProcesses() error {
	pids := c.envtestProcesses()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(pids) == 0 {
		return nil
	}
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, stopGrace, false, func(context.Context) (bool, error) {
		pids = c.envtestProcesses()
		return len(pids) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("processes %v of the local cluster in %s did not exit", pids, c.Dir)
	}
	return nil
}
