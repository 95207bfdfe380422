//go:build real

package real

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// costWindow is how long the operator's cost is measured while the clusters are idle.
const costWindow = time.Minute

// What the operator costs to watch over clusters: its CPU time and its connections to the
// servers, while one, then ten clusters of three members are idle. The operator runs in this test's
// process, which does nothing else meanwhile. Only `make bench-clusters` runs it
// (APPKEEPER_CLUSTER_COST_REPORT names the file the table goes to): it is a measure, not a test.
func TestMySQLClusterOperatorCost(t *testing.T) {
	report := os.Getenv("APPKEEPER_CLUSTER_COST_REPORT")
	if report == "" {
		t.Skip("a benchmark: make bench-clusters runs it")
	}
	var b strings.Builder
	b.WriteString("| clusters | members | operator CPU | per member | connections to the servers | reconciles per second |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	clusters := 0
	for _, want := range []int{1, 10} {
		for ; clusters < want; clusters++ {
			c, took := newLedger(t, fmt.Sprintf("cost-%d", clusters), 3)
			c.waitWhole(0)
			t.Logf("cluster %d of 3 members Available in %s", clusters+1, took.Round(time.Second))
		}
		cpu, reconciles := cpuTime(t), reconcileCount(t)
		time.Sleep(costWindow)
		used := (cpuTime(t) - cpu).Seconds() / costWindow.Seconds()
		rate := (reconcileCount(t) - reconciles) / costWindow.Seconds()
		members := 3 * clusters
		fmt.Fprintf(&b, "| %d | %d | %.1f%% of a core | %.2f%% | %d | %.1f |\n", clusters, members, 100*used, 100*used/float64(members),
			connectionsTo(t, 3306), rate)
	}
	t.Logf("the operator's cost over %s of idle clusters:\n%s", costWindow, b.String())
	if err := os.WriteFile(report, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// cpuTime is the CPU time this process used so far, the operator's and the test's.
func cpuTime(t *testing.T) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		t.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// reconcileCount is how many times the MySQL controller reconciled so far.
func reconcileCount(t *testing.T) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, metric := range f.GetMetric() {
			for _, label := range metric.GetLabel() {
				if label.GetName() == "controller" && label.GetValue() == "mysql" {
					total += metric.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// connectionsTo counts this process's established TCP connections to port.
func connectionsTo(t *testing.T, port int) int {
	sockets := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, "socket:[") {
			sockets[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	count := 0
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			// remote address:port, state 01 (established), inode.
			if len(fields) > 9 && strings.HasSuffix(fields[2], fmt.Sprintf(":%04X", port)) && fields[3] == "01" && sockets[fields[9]] {
				count++
			}
		}
	}
	return count
}
