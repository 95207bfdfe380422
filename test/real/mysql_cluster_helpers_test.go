//go:build real

package real

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/ackwriter"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

type clusterUnderTest struct {
	t        *testing.T
	ns       string
	password string
	service  *sql.DB
	// impatient reaches the client Service too, but gives up on an answer after impatience.
	impatient *sql.DB
	issued    int64
	// results are the writer's results by fault, for the report.
	results map[string][]ackwriter.Result
}

// writerConnections is how many connections a writer writes on, unless under heavy load.
const writerConnections = 4

// patience is how long most writers wait for an answer, so that a slow commit is not left in
// doubt; impatience is how long the writer of a stalled primary waits, as a web request would,
// so that its longest gap measures the failover rather than its own patience: a stalled server's
// connections answer nothing, and reset nothing.
const (
	patience   = 30 * time.Second
	impatience = 5 * time.Second
)

// startWriter starts a writer on connections through the client Service, stopped when the test
// ends if the test does not stop it first, so that the next one numbers its rows after it.
func (c *clusterUnderTest) startWriter(t *testing.T, connections int) *ackwriter.Writer {
	return c.startWriterOn(t, c.service, connections)
}

// startImpatientWriter is startWriter with a client that waits impatience for an answer.
func (c *clusterUnderTest) startImpatientWriter(t *testing.T, connections int) *ackwriter.Writer {
	return c.startWriterOn(t, c.impatient, connections)
}

func (c *clusterUnderTest) startWriterOn(t *testing.T, db *sql.DB, connections int) *ackwriter.Writer {
	w := ackwriter.Start(context.Background(), db.Conn, connections, c.issued)
	t.Cleanup(func() { c.issued = max(c.issued, w.Stop().Issued) })
	return w
}

// newLedger creates the MySQL ledger of members, with more lines of spec if given, in a new
// namespace, waits until it is Available, and opens its client Service with the writer's table in
// its database.
func newLedger(t *testing.T, namespace string, members int, spec ...string) (*clusterUnderTest, time.Duration) {
	return newLedgerIn(t, newNamespace(t, namespace, restricted), members, spec...)
}

// newLedgerIn is newLedger in the namespace ns, which holds what the spec refers to.
func newLedgerIn(t *testing.T, ns string, members int, spec ...string) (*clusterUnderTest, time.Duration) {
	manifest := fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: ledger
spec:
  image: %s
  members: %d
  database: ledger
  user: clerk
  storage: {size: 1Gi}
`, mariadbImage, members)
	for _, line := range spec {
		manifest += "  " + line + "\n"
	}
	created := time.Now()
	kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	took := waitAvailable(t, ns, "MySQL", "ledger", created)
	c := &clusterUnderTest{t: t, ns: ns}
	c.password = secretData(t, ns, c.get().SecretName())[appsv1alpha1.SecretKeyPassword]
	service := net.JoinHostPort(clusterIP(t, ns, "ledger"), strconv.Itoa(appsv1alpha1.MySQLPort))
	c.service, c.impatient = c.open(service), c.openWaiting(service, impatience)
	// kube-proxy sends the Service to the primary a moment after the operator labels it.
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, err := c.service.ExecContext(ctx, ackwriter.Schema)
		return err
	})
	return c, took
}

func (c *clusterUnderTest) get() *appsv1alpha1.MySQL {
	c.t.Helper()
	m := &appsv1alpha1.MySQL{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: c.ns, Name: "ledger"}, m); err != nil {
		c.t.Fatal(err)
	}
	return m
}

// waitWhole waits until the MySQL is Available, past epoch, with as many members as its spec
// asks for: a primary and replicas replicating without error, every member Ready and none
// errant. It returns the MySQL.
func (c *clusterUnderTest) waitWhole(epoch int64) *appsv1alpha1.MySQL {
	c.t.Helper()
	var m *appsv1alpha1.MySQL
	await.Eventually(c.t, timeout, func(ctx context.Context) error {
		m = &appsv1alpha1.MySQL{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: c.ns, Name: "ledger"}, m); err != nil {
			return err
		}
		if m.Status.Epoch <= epoch {
			return fmt.Errorf("epoch %d, primary %s: want a primary after epoch %d", m.Status.Epoch, m.Status.Primary, epoch)
		}
		roles := map[appsv1alpha1.MemberRole]int{}
		for _, member := range m.Status.Members {
			if member.Message != "" || member.Errant || !member.Ready {
				return fmt.Errorf("member %s: %s (errant %t, ready %t)", member.Name, member.Message, member.Errant, member.Ready)
			}
			roles[member.Role]++
		}
		if int32(len(m.Status.Members)) != m.MemberCount() || roles[appsv1alpha1.RolePrimary] != 1 || roles[appsv1alpha1.RoleReplica] != len(m.Status.Members)-1 {
			return fmt.Errorf("members %+v", m.Status.Members)
		}
		for _, cond := range m.Status.Conditions {
			if cond.Type == appsv1alpha1.ConditionAvailable && cond.Status != "True" {
				return fmt.Errorf("Available %s: %s", cond.Status, cond.Message)
			}
		}
		return nil
	})
	return m
}

func (c *clusterUnderTest) open(address string) *sql.DB { return c.openWaiting(address, patience) }

// openWaiting opens address with a client that waits read for each answer.
func (c *clusterUnderTest) openWaiting(address string, read time.Duration) *sql.DB {
	c.t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "clerk", c.password, "tcp", address, "ledger"
	cfg.Timeout, cfg.ReadTimeout = 2*time.Second, read
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(0)
	c.t.Cleanup(func() { _ = db.Close() })
	return db
}

func (c *clusterUnderTest) waitForAcks(w *ackwriter.Writer, n int) {
	c.t.Helper()
	if err := w.WaitFor(n, time.Minute); err != nil {
		// What the operator saw says why the writes stalled.
		m := c.get()
		c.explainStall(m)
		c.t.Fatalf("%v; primary %s, epoch %d; conditions %+v; members %+v", err, m.Status.Primary, m.Status.Epoch, m.Status.Conditions, m.Status.Members)
	}
}

// checkEveryMember reads each member's rows at its own address: every acknowledged row must be
// there once the member caught up, and no row the writer was refused or never sent, ever.
func (c *clusterUnderTest) checkEveryMember(m *appsv1alpha1.MySQL, r ackwriter.Result) {
	c.t.Helper()
	for _, member := range m.Status.Members {
		var v ackwriter.Verdict
		await.Eventually(c.t, time.Minute, func(ctx context.Context) error {
			// A member's pod made again has a new address.
			pod := getPod(c.t, c.ns, member.Name)
			if pod.Status.PodIP == "" {
				return fmt.Errorf("pod %s has no address yet", pod.Name)
			}
			// Each read is bounded on its own, so that one that hangs says where, rather than the
			// wait's deadline.
			readCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			var err error
			if v, err = ackwriter.Check(readCtx, c.open(net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(appsv1alpha1.MySQLPort))), r); err != nil {
				return fmt.Errorf("reading the rows of %s at %s on %s: %w", member.Name, pod.Status.PodIP, pod.Spec.NodeName, err)
			}
			if len(v.Phantom) > 0 {
				c.t.Fatalf("%s holds rows never acknowledged nor in doubt: %s", member.Name, v)
			}
			if len(v.Lost) > 0 {
				return fmt.Errorf("%s: %s", member.Name, v)
			}
			return nil
		})
	}
}

// clusterTrials is how many times each fault is tried: once in the tests, more in the benchmark
// (APPKEEPER_CLUSTER_TRIALS).
func clusterTrials() int {
	if n, err := strconv.Atoi(os.Getenv("APPKEEPER_CLUSTER_TRIALS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// record keeps what the writer saw through a fault whose checks passed: no acknowledged row lost.
func (c *clusterUnderTest) record(fault string, r ackwriter.Result) {
	if c.t.Failed() {
		return
	}
	if c.results == nil {
		c.results = map[string][]ackwriter.Result{}
	}
	c.results[fault] = append(c.results[fault], r)
}

// report logs, by fault, the trials, the acknowledged rows (none of them lost: a loss fails the
// trial) and the distribution of the longest pause between two acknowledged rows; with
// APPKEEPER_CLUSTER_REPORT it writes the same table to that file.
func (c *clusterUnderTest) report(t *testing.T) {
	var b strings.Builder
	b.WriteString("| fault | trials | acknowledged rows | lost | pause p50 | pause max |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	faults := slices.Sorted(maps.Keys(c.results))
	for _, fault := range faults {
		results := c.results[fault]
		var gaps []time.Duration
		acked := 0
		for _, r := range results {
			gaps = append(gaps, r.LongestGap)
			acked += len(r.Acked)
		}
		slices.Sort(gaps)
		fmt.Fprintf(&b, "| %s | %d | %d | 0 | %s | %s |\n", fault, len(results), acked,
			gaps[len(gaps)/2].Round(10*time.Millisecond), gaps[len(gaps)-1].Round(10*time.Millisecond))
	}
	t.Logf("writes through the client Service of a 3-member MySQL, by fault:\n%s", b.String())
	if path := os.Getenv("APPKEEPER_CLUSTER_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// waitDegraded waits until the MySQL's Degraded condition has reason, and logs its message.
func (c *clusterUnderTest) waitDegraded(reason string) {
	c.t.Helper()
	await.Eventually(c.t, time.Minute, func(context.Context) error {
		cond := meta.FindStatusCondition(c.get().Status.Conditions, appsv1alpha1.ConditionDegraded)
		if cond == nil || cond.Reason != reason {
			return fmt.Errorf("Degraded %+v, want the reason %s", cond, reason)
		}
		c.t.Logf("Degraded %s: %s", cond.Reason, cond.Message)
		return nil
	})
}

// wantEventSince waits until the MySQL has an Event of reason recorded after since, and logs it.
func (c *clusterUnderTest) wantEventSince(reason string, since time.Time) {
	c.t.Helper()
	await.WaitForEvents(c.t, k8s, c.ns, 10*time.Second, func(events []eventsv1.Event) error {
		for _, e := range events {
			last := e.EventTime.Time
			if e.Series != nil {
				last = e.Series.LastObservedTime.Time
			}
			if e.Reason == reason && last.After(since) {
				c.t.Logf("%s: %s", e.Reason, e.Note)
				return nil
			}
		}
		return fmt.Errorf("no %s Event since %s", reason, since.Format(time.RFC3339))
	})
}
