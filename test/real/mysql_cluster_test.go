//go:build real

package real

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/ackwriter"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// A cluster of three members, written to through its client Service by a writer that records
// every acknowledged row: after each fault of its primary, a replica takes over, the writes go on,
// the old primary comes back as a replica, and every member holds every acknowledged row.
func TestMySQLClusterFailsOverWithoutLosingAcknowledgedWrites(t *testing.T) {
	ns := newNamespace(t, "cluster", restricted)
	manifest := fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: ledger
spec:
  image: %s
  members: 3
  database: ledger
  user: clerk
  storage: {size: 1Gi}
`, mariadbImage)
	created := time.Now()
	kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	took := waitAvailable(t, ns, "MySQL", "ledger", created)
	c := &clusterUnderTest{t: t, ns: ns}
	m := c.waitWhole(0)
	t.Logf("a MySQL of 3 members Available %s after it was created, with %s as primary", took, m.Status.Primary)

	secret := secretData(t, ns, m.SecretName())
	c.password = secret[appsv1alpha1.SecretKeyPassword]
	c.service = c.open(net.JoinHostPort(clusterIP(t, ns, "ledger"), strconv.Itoa(appsv1alpha1.MySQLPort)))
	// kube-proxy sends the Service to the primary a moment after the operator labels it.
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, err := c.service.ExecContext(ctx, ackwriter.Schema)
		return err
	})

	faults := []struct {
		name  string
		fault func(pod *corev1.Pod)
	}{
		{"mariadbd killed", func(pod *corev1.Pod) { killMainProcess(t, pod) }},
		{"pod force-deleted", func(pod *corev1.Pod) {
			if err := k8s.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	t.Run("switchover", c.switchOver)
	t.Run("failover blocked while a replica hangs", c.blockedFailover)
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			c.t = t
			w := c.startWriter(t)
			c.waitForAcks(w, 100)
			before := c.get()
			f.fault(getPod(t, ns, before.Status.Primary))
			// Writes go on once the new primary is recorded and the Service reaches it.
			c.waitWhole(before.Status.Epoch)
			c.waitForAcks(w, 100)
			r := w.Stop()
			c.issued = r.Issued
			after := c.waitWhole(before.Status.Epoch)
			if after.Status.Primary == before.Status.Primary || after.Status.Epoch != before.Status.Epoch+1 {
				t.Errorf("primary %s (epoch %d) after the fault of %s (epoch %d): want another, one epoch later",
					after.Status.Primary, after.Status.Epoch, before.Status.Primary, before.Status.Epoch)
			}
			t.Logf("%s took over from %s; %d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
				after.Status.Primary, before.Status.Primary, len(r.Acked), len(r.Failed), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
			c.checkEveryMember(after, r)
		})
	}
}

// switchOver hands the primary's role to a replica with the kubectl plugin
// while the writer writes, and refuses a switchover to a member that does not exist.
func (c *clusterUnderTest) switchOver(t *testing.T) {
	c.t = t
	w := c.startWriter(t)
	c.waitForAcks(w, 100)
	before := c.get()
	out := kubectlAppkeeper(t, "-n", c.ns, "switchover", "mysql/ledger")
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	after := c.waitWhole(before.Status.Epoch)
	last := after.Status.LastSwitchover
	if last == nil || last.Result != appsv1alpha1.SwitchoverDone || last.To != after.Status.Primary || last.From != before.Status.Primary {
		t.Fatalf("status.lastSwitchover %+v after a switchover from %s; the plugin said:\n%s", last, before.Status.Primary, out)
	}
	t.Logf("%s; %d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
		last.Message, len(r.Acked), len(r.Failed), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)

	refused := exec.Command(testcluster.RepoBinary("kubectl-appkeeper"), "--kubeconfig", cluster.KubeconfigPath, "-n", c.ns,
		"switchover", "mysql/ledger", "--to", "ledger-7")
	if out, err := refused.CombinedOutput(); err == nil || !strings.Contains(string(out), "ledger-7 is no member") {
		t.Errorf("a switchover to a member that does not exist: %v\n%s", err, out)
	}
	if again := c.get(); again.Status.Primary != after.Status.Primary || again.Status.Epoch != after.Status.Epoch {
		t.Errorf("a refused switchover moved the primary from %s (epoch %d) to %s (epoch %d)",
			after.Status.Primary, after.Status.Epoch, again.Status.Primary, again.Status.Epoch)
	}
}

// blockedFailover hangs a replica, then kills the primary: the replica may hold the last
// acknowledged write, so no replica is promoted while it cannot be read; once it answers again
// the cluster is whole, and nothing acknowledged is lost.
func (c *clusterUnderTest) blockedFailover(t *testing.T) {
	c.t = t
	w := c.startWriter(t)
	c.waitForAcks(w, 100)
	before := c.get()
	var replica *corev1.Pod
	for _, member := range before.Status.Members {
		if member.Role == appsv1alpha1.RoleReplica {
			replica = getPod(t, c.ns, member.Name)
			break
		}
	}
	signalMainProcess(t, replica, syscall.SIGSTOP)
	resumed := false
	resume := func() {
		if !resumed {
			signalMainProcess(t, replica, syscall.SIGCONT)
			resumed = true
		}
	}
	defer resume()
	killMainProcess(t, getPod(t, c.ns, before.Status.Primary))
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		m := c.get()
		for _, cond := range m.Status.Conditions {
			if cond.Type == appsv1alpha1.ConditionDegraded && cond.Reason == appsv1alpha1.ReasonFailoverBlocked {
				if m.Status.Epoch != before.Status.Epoch {
					t.Fatalf("a replica was promoted (epoch %d, primary %s) while %s could not be read", m.Status.Epoch, m.Status.Primary, replica.Name)
				}
				t.Logf("Degraded %s: %s", cond.Reason, cond.Message)
				return nil
			}
		}
		return fmt.Errorf("not blocked yet: primary %s, epoch %d", m.Status.Primary, m.Status.Epoch)
	})
	resume()
	c.waitWhole(before.Status.Epoch - 1)
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	after := c.waitWhole(before.Status.Epoch - 1)
	t.Logf("%s is primary once %s answered again; %d acknowledged, %d in doubt; longest gap between acknowledgements %s",
		after.Status.Primary, replica.Name, len(r.Acked), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
}

type clusterUnderTest struct {
	t        *testing.T
	ns       string
	password string
	service  *sql.DB
	issued   int64
}

// startWriter starts a writer on four connections through the client Service, stopped when the
// test ends if the test does not stop it first, so that the next one numbers its rows after it.
func (c *clusterUnderTest) startWriter(t *testing.T) *ackwriter.Writer {
	w := ackwriter.Start(context.Background(), c.dial, 4, c.issued)
	t.Cleanup(func() { c.issued = max(c.issued, w.Stop().Issued) })
	return w
}

func (c *clusterUnderTest) get() *appsv1alpha1.MySQL {
	c.t.Helper()
	m := &appsv1alpha1.MySQL{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: c.ns, Name: "ledger"}, m); err != nil {
		c.t.Fatal(err)
	}
	return m
}

// waitWhole waits until the MySQL is Available, past epoch, with a primary and two replicas
// replicating without error, and returns it.
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
			if member.Message != "" {
				return fmt.Errorf("member %s: %s", member.Name, member.Message)
			}
			roles[member.Role]++
		}
		if roles[appsv1alpha1.RolePrimary] != 1 || roles[appsv1alpha1.RoleReplica] != 2 {
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

func (c *clusterUnderTest) open(address string) *sql.DB {
	c.t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "clerk", c.password, "tcp", address, "ledger"
	cfg.Timeout, cfg.ReadTimeout = 2*time.Second, 30*time.Second
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(0)
	c.t.Cleanup(func() { _ = db.Close() })
	return db
}

// dial reaches the primary through the client Service, as an application does.
func (c *clusterUnderTest) dial(ctx context.Context) (*sql.Conn, error) { return c.service.Conn(ctx) }

func (c *clusterUnderTest) waitForAcks(w *ackwriter.Writer, n int) {
	c.t.Helper()
	if err := w.WaitFor(n, time.Minute); err != nil {
		c.t.Fatal(err)
	}
}

// checkEveryMember reads each member's rows at its own address: every acknowledged row must be
// there once the member caught up, and no row the writer was refused or never sent, ever.
func (c *clusterUnderTest) checkEveryMember(m *appsv1alpha1.MySQL, r ackwriter.Result) {
	c.t.Helper()
	for _, member := range m.Status.Members {
		pod := getPod(c.t, c.ns, member.Name)
		db := c.open(net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(appsv1alpha1.MySQLPort)))
		var v ackwriter.Verdict
		await.Eventually(c.t, time.Minute, func(ctx context.Context) error {
			var err error
			if v, err = ackwriter.Check(ctx, db, r); err != nil {
				return err
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
