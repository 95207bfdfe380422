package testenv

import (
	"bytes"
	"sync"
	"testing"
)

// logTap receives the operator's log, one JSON line per write, and hands each line to the tests
// that listen at the time; with none listening, the line is dropped.
type logTap struct {
	mu        sync.Mutex
	listeners map[*logLines]bool
}

type logLines struct {
	mu    sync.Mutex
	lines []string
}

var operatorLog = &logTap{listeners: map[*logLines]bool{}}

func (tap *logTap) Write(p []byte) (int, error) {
	line := string(bytes.TrimSpace(p))
	tap.mu.Lock()
	defer tap.mu.Unlock()
	for listener := range tap.listeners {
		listener.mu.Lock()
		listener.lines = append(listener.lines, line)
		listener.mu.Unlock()
	}
	return len(p), nil
}

// startupLog holds what the operator logged while the manager was built.
var startupLog = &logLines{}

// listen makes captured receive the operator's log until the returned function is called.
func (captured *logLines) listen() (stop func()) {
	operatorLog.mu.Lock()
	operatorLog.listeners[captured] = true
	operatorLog.mu.Unlock()
	return func() {
		operatorLog.mu.Lock()
		delete(operatorLog.listeners, captured)
		operatorLog.mu.Unlock()
	}
}

// StartupLog returns the lines, in zap's JSON, that the operator under test logged while its
// manager was built: the decisions it takes once, at start.
func StartupLog() []string {
	startupLog.mu.Lock()
	defer startupLog.mu.Unlock()
	return append([]string(nil), startupLog.lines...)
}

// CaptureLog returns a function that gives the lines, in zap's JSON, that the operator under test
// has logged since CaptureLog was called, until t ends.
func CaptureLog(t testing.TB) func() []string {
	captured := &logLines{}
	t.Cleanup(captured.listen())
	return func() []string {
		captured.mu.Lock()
		defer captured.mu.Unlock()
		return append([]string(nil), captured.lines...)
	}
}
