package operatorproc

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Supervisor keeps the operator running as a Deployment's kubelet does: when the process exits,
// however it ended, it starts it again with the same flags after a delay, and counts the
// restarts. Every run appends to the same log. Its metrics add up the runs: a run's counters are
// read a last time before Kill ends it, and every second while it runs, so that a run that ends on
// its own loses at most its last second.
type Supervisor struct {
	opts   Options
	delay  time.Duration
	cancel context.CancelFunc
	ended  chan struct{}

	mu       sync.Mutex
	current  *Process // nil between runs
	last     *Snapshot
	past     *Snapshot // the sum of the runs that ended, as last read
	restarts int
}

// metricsRefresh is how often a supervised run's counters are read.
const metricsRefresh = time.Second

// Supervise starts the operator as Start does and keeps it running until Stop.
func Supervise(ctx context.Context, o Options, restartDelay time.Duration) (*Supervisor, error) {
	p, err := Start(ctx, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Supervisor{opts: p.opts, delay: restartDelay, cancel: cancel, ended: make(chan struct{}), current: p, past: NewSnapshot()}
	go s.supervise(ctx, p)
	return s, nil
}

func (s *Supervisor) supervise(ctx context.Context, p *Process) {
	defer close(s.ended)
	refresh := time.NewTicker(metricsRefresh)
	defer refresh.Stop()
	for {
		select {
		case <-ctx.Done():
			p.Stop()
			return
		case <-refresh.C:
			_, _ = s.read(ctx, p)
			continue
		case <-p.Done():
		}
		s.mu.Lock()
		if s.last != nil {
			s.past.add(s.last)
		}
		s.current, s.last = nil, nil
		s.mu.Unlock()
		for p = nil; p == nil; p = s.restart() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.delay):
			}
		}
	}
}

// restart runs the operator again, appending to its log, and makes it the running process at
// once: like a pod's container, it can be killed again before it is ready. A start that fails
// counts as a restart too, as a crash-looping container does; restart then returns nil.
func (s *Supervisor) restart() *Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restarts++
	logFile, err := os.OpenFile(s.opts.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil
	}
	p, err := launch(s.opts, logFile)
	if err != nil {
		return nil
	}
	s.current = p
	return p
}

// read reads p's counters and keeps them as its run's latest.
func (s *Supervisor) read(ctx context.Context, p *Process) (*Snapshot, error) {
	m, err := p.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == p {
		s.last = m
	}
	return m, nil
}

// Current is the running process, nil while the supervisor waits to start it again.
func (s *Supervisor) Current() *Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Kill reads the running process's counters a last time, kills it with SIGKILL and returns once
// it has ended; the supervisor starts it again after its delay. Between runs it kills nothing and
// returns false.
func (s *Supervisor) Kill(ctx context.Context) bool {
	p := s.Current()
	if p == nil {
		return false
	}
	_, _ = s.read(ctx, p)
	p.Kill()
	return true
}

// WaitReady returns once a run is up as Start waits for it: its metrics answer and, unless it is a
// standby, its controllers have started. A run that ends meanwhile is waited for in the next.
func (s *Supervisor) WaitReady(ctx context.Context) error {
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p := s.Current()
		return p != nil && p.waitReady(ctx) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the operator to run again: %w: see %s", err, s.opts.LogPath)
	}
	return nil
}

// Metrics adds up the counters of every run so far, the running one read now (or last read, if
// it has just ended); Leader and HeapInuse are the running one's.
func (s *Supervisor) Metrics(ctx context.Context) *Snapshot {
	if p := s.Current(); p != nil {
		_, _ = s.read(ctx, p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := NewSnapshot()
	sum.add(s.past)
	if s.current != nil && s.last != nil {
		sum.add(s.last)
		sum.Leader, sum.HeapInuse = s.last.Leader, s.last.HeapInuse
	}
	return sum
}

// Restarts counts the times the supervisor started the operator again.
func (s *Supervisor) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// LogPath is the file every run writes its log to.
func (s *Supervisor) LogPath() string { return s.opts.LogPath }

// Stop stops the running process as Process.Stop does and starts no other.
func (s *Supervisor) Stop() {
	s.cancel()
	<-s.ended
}
