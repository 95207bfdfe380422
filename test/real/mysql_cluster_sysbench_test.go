//go:build real

package real

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// sysbenchTime is how long each sysbench run measures.
const sysbenchTime = 60 * time.Second

// The cost of durability, measured with Debian's sysbench through the client Service: the
// transactions per second of oltp_read_write on a MySQL of one server, then on one of three
// members with Required durability, each alone on the machine. Only `make bench-clusters` runs
// it (APPKEEPER_SYSBENCH_REPORT names the file the table goes to): it is a measure, not a test.
func TestMySQLClusterSysbench(t *testing.T) {
	report := os.Getenv("APPKEEPER_SYSBENCH_REPORT")
	if report == "" {
		t.Skip("a benchmark: make bench-clusters runs it")
	}
	if _, err := exec.LookPath("sysbench"); err != nil {
		t.Fatalf("sysbench is not installed: %v", err)
	}
	// Four threads leave the cores idle between a commit and its acknowledgement; sixteen keep
	// them busy, as a loaded server is.
	threads := []int{4, 16}
	tps := map[int]map[int]float64{}
	for _, members := range []int{1, 3} {
		c, _ := newLedger(t, fmt.Sprintf("sysbench-%d", members), members)
		if members > 1 {
			c.waitWhole(0)
		}
		tps[members] = map[int]float64{}
		for i, n := range threads {
			tps[members][n] = sysbench(t, c, n, i == 0)
			t.Logf("%d member(s), %d threads: %.1f transactions per second", members, n, tps[members][n])
		}
		deleteLedger(t, c)
	}
	var table strings.Builder
	table.WriteString("| threads | 1 member TPS | 3 members (Required) TPS | 3 members vs 1 |\n| ---: | ---: | ---: | ---: |\n")
	for _, n := range threads {
		fmt.Fprintf(&table, "| %d | %.1f | %.1f | %.2f |\n", n, tps[1][n], tps[3][n], tps[3][n]/tps[1][n])
	}
	t.Logf("sysbench oltp_read_write, %s each, through the client Service:\n%s", sysbenchTime, table.String())
	if err := os.WriteFile(report, []byte(table.String()), 0o644); err != nil {
		t.Error(err)
	}
}

var sysbenchTPS = regexp.MustCompile(`transactions:\s+\d+\s+\(([0-9.]+) per sec\.\)`)

// sysbench runs oltp_read_write on threads against the ledger database, once it prepared
// sysbench's tables there if prepare.
func sysbench(t *testing.T, c *clusterUnderTest, threads int, prepare bool) float64 {
	args := []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=" + clusterIP(t, c.ns, "ledger"),
		"--mysql-port=" + strconv.Itoa(appsv1alpha1.MySQLPort), "--mysql-user=clerk", "--mysql-password=" + c.password,
		"--mysql-db=ledger", "--tables=4", "--table-size=10000", "--threads=" + strconv.Itoa(threads)}
	if prepare {
		if out, err := exec.Command("sysbench", append(args, "prepare")...).CombinedOutput(); err != nil {
			t.Fatalf("sysbench prepare: %v\n%s", err, out)
		}
	}
	out, err := exec.Command("sysbench", append(args, "--time="+strconv.Itoa(int(sysbenchTime.Seconds())), "run")...).CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench run: %v\n%s", err, out)
	}
	match := sysbenchTPS.FindSubmatch(out)
	if match == nil {
		t.Fatalf("no transactions per second in sysbench's output:\n%s", out)
	}
	tps, _ := strconv.ParseFloat(string(match[1]), 64)
	return tps
}

// deleteLedger deletes the MySQL and waits until its pods are gone, so that the next measure has
// the machine to itself.
func deleteLedger(t *testing.T, c *clusterUnderTest) {
	if err := k8s.Delete(context.Background(), c.get()); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(c.ns)); err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left", len(pods.Items))
		}
		return nil
	})
}
