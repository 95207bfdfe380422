//go:build real

package real

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/tuning"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// tunedMemory is the memory limit of the tuned server: small, so that the server's defaults (a
// 128 MiB buffer pool, 151 connections of up to 16 MiB of temporary table each) would not fit it.
const tunedMemory = "384Mi"

// stormFor is how long every connection the server allows works at once.
const stormFor = 30 * time.Second

// TestAMySQLSizedFromItsMemoryRunsEveryConnectionAtOnceWithinIt gives a MariaDB server a memory
// limit and no settings of its own, fills its buffer pool, then runs every connection it allows at
// once, each grouping into a temporary table larger than tmp_table_size and sorting more than its
// sort buffer holds. The server must not be killed for its memory. A change of the tuning profile
// then restarts it with the settings of the new profile, with a Tuned Event.
func TestAMySQLSizedFromItsMemoryRunsEveryConnectionAtOnceWithinIt(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "tuned", restricted)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`{"apiVersion": "apps.appkeeper.dev/v1alpha1", "kind": "MySQL", "metadata": {"name": "shop"},
  "spec": {"image": %q, "database": "orders", "user": "clerk", "storage": {"size": "1Gi"},
    "resources": {"limits": {"memory": %q}}, "tuning": {"mode": "Auto"}}}`, mariadbImage, tunedMemory), "apply", "-n", ns, "-f", "-")
	waitMySQL(t, ns, created)
	tuned := tuningOf(t, ns)
	if tuned.Mode != appsv1alpha1.TuningAuto || tuned.Memory != tunedMemory || tuned.Message != "" {
		t.Fatalf("status.tuning %+v, want Auto settings for %s", tuned, tunedMemory)
	}
	t.Logf("tuned for %s: %s; worst case %s", tuned.Memory, tuning.List(tuned.Settings), tuned.WorstCase)
	db := clerkDBTimingOut(t, ns, 2*stormFor)
	requireServerRuns(t, db, tuned)
	pod := getPod(t, ns, "shop-0")

	pool := setting(t, tuned, "innodb_buffer_pool_size")
	fillStart := time.Now()
	mustExec(t, db, "CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(1000))")
	mustExec(t, db, fmt.Sprintf("INSERT INTO big SELECT seq, REPEAT(CHAR(97 + seq %% 26), 1000) FROM seq_1_to_%d", (pool+16)*1024))
	// A scan of every row fills the buffer pool.
	mustExec(t, db, "SELECT COUNT(*), SUM(LENGTH(pad)) FROM big")
	t.Logf("%d MiB of rows written and read in %s, more than the buffer pool holds", pool+16, time.Since(fillStart).Round(time.Millisecond))

	// The probes connect as root: two connections stay free for them.
	connections := int(setting(t, tuned, "max_connections")) - 2
	queries, failures := storm(db, connections)
	// mysqld is the container's first process: its peak resident memory, beside the limit.
	peak, err := runKubectl("", "exec", "-n", ns, "shop-0", "-c", "mysql", "--", "grep", "VmHWM", "/proc/1/status")
	if err != nil {
		peak = "unknown (" + err.Error() + ")"
	}
	t.Logf("%d connections at once for %s: %d queries; mysqld's peak resident memory %s, its limit %s",
		connections, stormFor, queries, strings.Join(strings.Fields(peak), " "), tunedMemory)
	if len(failures) > 0 {
		t.Errorf("%d queries failed, the first: %v", len(failures), failures[0])
	}
	after := getPod(t, ns, "shop-0")
	if after.UID != pod.UID || restartCount(after) != restartCount(pod) {
		t.Errorf("pod shop-0 restarted %d times during the storm (%+v), want none", restartCount(after)-restartCount(pod), after.Status.ContainerStatuses[0].LastTerminationState)
	}

	t.Run("a new profile restarts the server with its settings", func(t *testing.T) {
		changed := time.Now()
		kubectl(t, "", "patch", "-n", ns, "mysql", "shop", "--type=merge", "-p", `{"spec":{"tuning":{"profile":"ReadMostly"}}}`)
		await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventTuned)
		waitAvailable(t, ns, "MySQL", "shop", changed)
		readMostly := tuningOf(t, ns)
		if setting(t, readMostly, "innodb_buffer_pool_size") <= pool {
			t.Errorf("ReadMostly's buffer pool %s, want more than Mixed's %d MiB", tuning.List(readMostly.Settings), pool)
		}
		requireServerRuns(t, clerkDBTimingOut(t, ns, 10*time.Second), readMostly)
	})
}

// storm runs connections at once, each repeating a grouping into a temporary table larger than
// tmp_table_size and a sort larger than its sort buffer for stormFor, and returns how many queries
// ran and the errors of those that failed.
func storm(db *sql.DB, connections int) (int, []error) {
	db.SetMaxOpenConns(connections)
	var mu sync.Mutex
	var queries int
	var failures []error
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), stormFor)
	defer cancel()
	for range connections {
		wg.Go(func() {
			conn, err := db.Conn(context.Background())
			if err != nil {
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
				return
			}
			defer func() { _ = conn.Close() }()
			for ctx.Err() == nil {
				var n, dummy int64
				for _, q := range []string{
					// 5,000 groups of a 1,000-byte maximum: a temporary table of about 5 MiB.
					"SELECT COUNT(*), SUM(LENGTH(m)) FROM (SELECT id % 5000 AS g, MAX(pad) AS m FROM big WHERE id <= 20000 GROUP BY g) t",
					// 20 MiB of rows sorted through a 2 MiB sort buffer.
					"SELECT COUNT(*), SUM(id) FROM (SELECT id, pad FROM big WHERE id <= 20000 ORDER BY REVERSE(pad), id DESC LIMIT 10000) s",
				} {
					// Each query runs to its end: the storm's deadline only stops the loop.
					err := conn.QueryRowContext(context.Background(), q).Scan(&n, &dummy)
					mu.Lock()
					queries++
					if err != nil {
						failures = append(failures, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return queries, failures
}

// requireServerRuns requires the server to run with the settings tuning computed.
func requireServerRuns(t *testing.T, db *sql.DB, tuned *appsv1alpha1.TuningStatus) {
	t.Helper()
	var pool, connections, temp int64
	if err := db.QueryRow("SELECT @@innodb_buffer_pool_size, @@max_connections, @@tmp_table_size").Scan(&pool, &connections, &temp); err != nil {
		t.Fatal(err)
	}
	if pool != setting(t, tuned, "innodb_buffer_pool_size")<<20 || connections != setting(t, tuned, "max_connections") ||
		temp != setting(t, tuned, "tmp_table_size")<<20 {
		t.Errorf("the server runs with a buffer pool of %d bytes, %d connections and temporary tables of %d bytes; status.tuning says %s",
			pool, connections, temp, tuning.List(tuned.Settings))
	}
}

func tuningOf(t *testing.T, ns string) *appsv1alpha1.TuningStatus {
	t.Helper()
	m := &appsv1alpha1.MySQL{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shop"}, m); err != nil {
		t.Fatal(err)
	}
	return requireTuning(t, m.Status.Tuning)
}

func requireTuning(t *testing.T, tuned *appsv1alpha1.TuningStatus) *appsv1alpha1.TuningStatus {
	t.Helper()
	if tuned == nil {
		t.Fatal("status.tuning is unset")
	}
	return tuned
}

// setting is a computed setting's value, in MiB for a size.
func setting(t *testing.T, tuned *appsv1alpha1.TuningStatus, name string) int64 {
	t.Helper()
	for _, s := range tuned.Settings {
		if s.Name == name {
			v, err := strconv.ParseInt(strings.TrimSuffix(s.Value, "M"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("status.tuning has no %s: %s", name, tuning.List(tuned.Settings))
	return 0
}

func mustExec(t *testing.T, db *sql.DB, statement string) {
	t.Helper()
	if _, err := db.Exec(statement); err != nil {
		t.Fatalf("%s: %v", statement, err)
	}
}
