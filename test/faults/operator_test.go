//go:build faults

package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/test/framework/operatorproc"
)

// restartDelay is how long the supervisor waits before it starts an operator that exited again.
const restartDelay = 500 * time.Millisecond

// leaseNamespace holds the leader election Lease, as in a cluster installed from dist/install.yaml.
const leaseNamespace = "appkeeper-system"

// startOperators runs replicas of the operator under supervisors, with leader election when there
// are more than one, each logging to logs/operator-<name>[-<i>].log. The test stops them when it
// ends and fails if a log shows a panic.
func startOperators(t *testing.T, name string, replicas int) []*operatorproc.Supervisor {
	t.Helper()
	var args []string
	if replicas > 1 {
		args = []string{"--leader-elect", "--leader-election-namespace", leaseNamespace}
	}
	ops := make([]*operatorproc.Supervisor, replicas)
	for i := range ops {
		logName := "operator-" + name
		if replicas > 1 {
			logName += fmt.Sprintf("-%d", i)
		}
		o := operatorproc.Options{
			Binary: operatorBinary, Kubeconfig: operatorKubeconfig,
			LogPath: filepath.Join(cluster.Dir, "logs", logName+".log"),
			Args:    args, Standby: replicas > 1,
		}
		op, err := operatorproc.Supervise(context.Background(), o, restartDelay)
		if err != nil {
			t.Fatal(err)
		}
		ops[i] = op
		t.Cleanup(func() {
			op.Stop()
			for _, line := range panics(readLog(t, op.LogPath())) {
				t.Errorf("the operator panicked (%s): %s", op.LogPath(), line)
			}
		})
	}
	return ops
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// panics are the lines of a Go panic and its goroutine dump.
func panics(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "panic:") || strings.HasPrefix(line, "goroutine ") {
			out = append(out, line)
		}
	}
	return out
}

// errorLines are the lines the operator logged at error level.
func errorLines(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"level":"error"`) {
			out = append(out, line)
		}
	}
	return out
}

// requests are the operator's writes (requests that change something) and its HTTP 409 answers.
type requests struct{ writes, conflicts float64 }

// counts adds up the operator's requests over its replicas and their runs.
func counts(ops []*operatorproc.Supervisor) requests {
	var r requests
	for _, op := range ops {
		m := op.Metrics(context.Background())
		r.writes += m.Writes()
		r.conflicts += m.Conflicts
	}
	return r
}

// since is what was requested after earlier.
func (r requests) since(earlier requests) requests {
	return requests{r.writes - earlier.writes, r.conflicts - earlier.conflicts}
}
