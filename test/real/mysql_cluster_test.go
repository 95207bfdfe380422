//go:build real

package real

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
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
	c, took := newLedger(t, "cluster", 3)
	m := c.waitWhole(0)
	t.Logf("a MySQL of 3 members Available %s after it was created, with %s as primary", took, m.Status.Primary)

	faults := []struct {
		name        string
		connections int
		fault       func(t *testing.T, pod *corev1.Pod)
	}{
		{"mariadbd killed", writerConnections, killMainProcess},
		{"mariadbd killed under heavy load", 48, killMainProcess},
		{"pod force-deleted", writerConnections, func(t *testing.T, pod *corev1.Pod) {
			if err := k8s.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
				t.Fatal(err)
			}
			// The kubelet kills the old pod's containers before it starts the new pod's.
			await.Eventually(t, time.Minute, func(ctx context.Context) error {
				again := &corev1.Pod{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), again); err != nil {
					return err
				}
				if again.UID == pod.UID || again.Status.PodIP == "" {
					return fmt.Errorf("pod %s is not made again yet", pod.Name)
				}
				return nil
			})
		}},
	}
	t.Run("a drain waits for a node to switch over to", c.drainWaits)
	t.Run("failover blocked while a replica hangs", c.blockedFailover)
	t.Run("promoted accepting data loss while a replica hangs", c.promoteAcceptingDataLoss)
	t.Run("writes wait while no replica acknowledges", c.writesWait)
	t.Run("a hang shorter than the failover delay keeps the primary", c.delayedFailover)
	for trial := range clusterTrials() {
		t.Run(fmt.Sprintf("a drain of the primary's node switches over first %d", trial+1), c.drainSwitchesOver)
		t.Run(fmt.Sprintf("switchover %d", trial+1), func(t *testing.T) { c.switchOver(t) })
		for _, f := range faults {
			t.Run(fmt.Sprintf("%s %d", f.name, trial+1), func(t *testing.T) { c.failOver(t, f.name, f.connections, f.fault) })
		}
		t.Run(fmt.Sprintf("primary hung %d", trial+1), c.hungPrimary)
		t.Run(fmt.Sprintf("primary's node hung %d", trial+1), c.primaryNodeHung)
		t.Run(fmt.Sprintf("primary's node lost %d", trial+1), c.primaryNodeLost)
		t.Run(fmt.Sprintf("primary's node lost for good %d", trial+1), c.primaryNodeLostForGood)
		t.Run(fmt.Sprintf("primary's node cut off %d", trial+1), c.primaryNodeCutOff)
		t.Run(fmt.Sprintf("primary cut off from its replicas %d", trial+1), c.primaryCutOffFromReplicas)
		t.Run(fmt.Sprintf("primary's kubelet cut off from the API server %d", trial+1), c.primaryKubeletCutOff)
		t.Run(fmt.Sprintf("config change %d", trial+1), c.rollConfig)
	}
	c.report(t)
}

// failOver runs fault on the primary while the writer writes, and checks that a replica took
// over and that every member holds every acknowledged row.
func (c *clusterUnderTest) failOver(t *testing.T, name string, connections int, fault func(*testing.T, *corev1.Pod)) ackwriter.Result {
	c.t = t
	w := c.startWriter(t, connections)
	c.waitForAcks(w, 100)
	before := c.get()
	fault(t, getPod(t, c.ns, before.Status.Primary))
	// Writes go on once a primary takes them and the Service reaches it: a replica that took over,
	// or the same member, when its container restarted before the operator judged it failed and
	// it held everything its replicas held.
	c.waitWhole(before.Status.Epoch - 1)
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	after := c.waitWhole(before.Status.Epoch - 1)
	if (after.Status.Primary == before.Status.Primary) != (after.Status.Epoch == before.Status.Epoch) {
		t.Errorf("primary %s (epoch %d) after the fault of %s (epoch %d): a new primary takes a new epoch, the same one none",
			after.Status.Primary, after.Status.Epoch, before.Status.Primary, before.Status.Epoch)
	}
	outcome := fmt.Sprintf("%s took over from %s", after.Status.Primary, before.Status.Primary)
	if after.Status.Primary == before.Status.Primary {
		outcome = before.Status.Primary + " restarted and was opened again"
	}
	t.Logf("%s; %d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
		outcome, len(r.Acked), len(r.Failed), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	c.record(name, r)
	return r
}

// switchOver hands the primary's role to a replica with the kubectl plugin
// while the writer writes, and refuses a switchover to a member that does not exist.
func (c *clusterUnderTest) switchOver(t *testing.T) ackwriter.Result {
	c.t = t
	w := c.startWriter(t, writerConnections)
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
	c.record("switchover", r)

	refused := exec.Command(testcluster.RepoBinary("kubectl-appkeeper"), "--kubeconfig", cluster.KubeconfigPath, "-n", c.ns,
		"switchover", "mysql/ledger", "--to", "ledger-7")
	if out, err := refused.CombinedOutput(); err == nil || !strings.Contains(string(out), "ledger-7 is no member") {
		t.Errorf("a switchover to a member that does not exist: %v\n%s", err, out)
	}
	if again := c.get(); again.Status.Primary != after.Status.Primary || again.Status.Epoch != after.Status.Epoch {
		t.Errorf("a refused switchover moved the primary from %s (epoch %d) to %s (epoch %d)",
			after.Status.Primary, after.Status.Epoch, again.Status.Primary, again.Status.Epoch)
	}
	return r
}

// blockedFailover hangs a replica, then kills the primary: the replica may hold the last
// acknowledged write, so no replica is promoted while it cannot be read; once it answers again
// the cluster is whole, and nothing acknowledged is lost.
func (c *clusterUnderTest) blockedFailover(t *testing.T) {
	c.t = t
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	replica := getPod(t, c.ns, firstReplica(before))
	resume := freeze(t, replica)
	defer resume()
	killMainProcess(t, getPod(t, c.ns, before.Status.Primary))
	c.waitBlocked(before, replica.Name)
	resume()
	c.waitWhole(before.Status.Epoch - 1)
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	after := c.waitWhole(before.Status.Epoch - 1)
	t.Logf("%s is primary once %s answered again; %d acknowledged, %d in doubt; longest gap between acknowledgements %s",
		after.Status.Primary, replica.Name, len(r.Acked), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	c.record("failover blocked, then done", r)
}

// waitBlocked waits until the failover from the primary of before is blocked by the replica
// that cannot be read, and fails the test if a replica is promoted all the same.
func (c *clusterUnderTest) waitBlocked(before *appsv1alpha1.MySQL, replica string) {
	c.t.Helper()
	await.Eventually(c.t, time.Minute, func(context.Context) error {
		m := c.get()
		for _, cond := range m.Status.Conditions {
			if cond.Type == appsv1alpha1.ConditionDegraded && cond.Reason == appsv1alpha1.ReasonFailoverBlocked {
				if m.Status.Epoch != before.Status.Epoch {
					c.t.Fatalf("a replica was promoted (epoch %d, primary %s) while %s could not be read", m.Status.Epoch, m.Status.Primary, replica)
				}
				c.t.Logf("Degraded %s: %s", cond.Reason, cond.Message)
				return nil
			}
		}
		return fmt.Errorf("not blocked yet: primary %s, epoch %d", m.Status.Primary, m.Status.Epoch)
	})
}

// promoteAcceptingDataLoss hangs a replica, waits until the other acknowledged writes alone, then
// kills the primary: the failover is blocked until a person promotes with the kubectl plugin,
// accepting the loss of what only the hung replica held. Since the other replica acknowledged
// writes after the hang began, it received every earlier one too: nothing is lost here, and the
// hung replica comes back as a replica once it answers.
func (c *clusterUnderTest) promoteAcceptingDataLoss(t *testing.T) {
	c.t = t
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	replica := getPod(t, c.ns, firstReplica(before))
	resume := freeze(t, replica)
	defer resume()
	c.waitForAcks(w, 100)
	killMainProcess(t, getPod(t, c.ns, before.Status.Primary))
	c.waitBlocked(before, replica.Name)
	out := kubectlAppkeeper(t, "-n", c.ns, "promote", "mysql/ledger", "--accept-data-loss", "--reason", "the test hung "+replica.Name)
	m := c.get()
	last := m.Status.LastFailover
	if m.Status.Epoch == before.Status.Epoch || last == nil || !last.AcceptedDataLoss || last.To != m.Status.Primary || last.To == replica.Name {
		t.Fatalf("epoch %d, primary %s, status.lastFailover %+v after a promotion accepting data loss; the plugin said:\n%s",
			m.Status.Epoch, m.Status.Primary, last, out)
	}
	t.Logf("the plugin said:\n%s", out)
	c.waitForAcks(w, 100)
	resume()
	r := w.Stop()
	c.issued = r.Issued
	after := c.waitWhole(before.Status.Epoch)
	t.Logf("%s took over, as asked; %d acknowledged, %d in doubt; longest gap between acknowledgements %s",
		after.Status.Primary, len(r.Acked), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	c.record("promoted accepting data loss", r)
}

func firstReplica(m *appsv1alpha1.MySQL) string {
	for _, member := range m.Status.Members {
		if member.Role == appsv1alpha1.RoleReplica {
			return member.Name
		}
	}
	return ""
}

// writesWait hangs every replica: with durability Required no commit returns while none can
// acknowledge, the status says why, and once they answer again the writes go on, nothing lost.
func (c *clusterUnderTest) writesWait(t *testing.T) {
	c.t = t
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	var resumes []func()
	resumeAll := func() {
		for _, resume := range resumes {
			resume()
		}
	}
	defer resumeAll()
	for _, member := range before.Status.Members {
		if member.Name != before.Status.Primary {
			resumes = append(resumes, freeze(t, getPod(t, c.ns, member.Name)))
		}
	}
	c.waitDegraded(appsv1alpha1.ReasonWritesWaiting)
	acked := w.Acknowledged()
	time.Sleep(3 * time.Second)
	if now := w.Acknowledged(); now != acked {
		t.Fatalf("%d writes were acknowledged while no replica could acknowledge them", now-acked)
	}
	resumeAll()
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	after := c.waitWhole(before.Status.Epoch - 1)
	t.Logf("no write was acknowledged while the replicas hung; %d acknowledged, %d in doubt; longest gap between acknowledgements %s",
		len(r.Acked), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
}

// delayedFailover sets spec.replication.failoverDelay longer than a hang of the primary: no
// replica takes over while it hangs, the status says how long the operator waits, and once the
// primary thaws the writes go on, nothing lost.
func (c *clusterUnderTest) delayedFailover(t *testing.T) {
	c.t = t
	kubectl(t, "", "patch", "-n", c.ns, "mysql", "ledger", "--type", "merge", "-p", `{"spec":{"replication":{"failoverDelay":"1m"}}}`)
	defer kubectl(t, "", "patch", "-n", c.ns, "mysql", "ledger", "--type", "merge", "-p", `{"spec":{"replication":{"failoverDelay":null}}}`)
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	resume := freeze(t, getPod(t, c.ns, before.Status.Primary))
	defer resume()
	hung := time.Now()
	await.Eventually(t, time.Minute, func(context.Context) error {
		cond := meta.FindStatusCondition(c.get().Status.Conditions, appsv1alpha1.ConditionAvailable)
		if cond == nil || cond.Reason != appsv1alpha1.ReasonNoPrimary || !strings.Contains(cond.Message, "failoverDelay") {
			return fmt.Errorf("Available %+v", cond)
		}
		t.Logf("Available %s %s: %s", cond.Status, cond.Reason, cond.Message)
		return nil
	})
	time.Sleep(time.Until(hung.Add(8 * time.Second)))
	resume()
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	after := c.waitWhole(before.Status.Epoch - 1)
	if after.Status.Epoch != before.Status.Epoch {
		t.Fatalf("%s took over (epoch %d) while %s hung for less than the failover delay", after.Status.Primary, after.Status.Epoch, before.Status.Primary)
	}
	t.Logf("%s kept its role through an 8s hang; %d acknowledged, %d in doubt; longest gap between acknowledgements %s",
		after.Status.Primary, len(r.Acked), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	if len(r.InDoubt) > 0 {
		// A hang breaks no client's connection: only sessions the operator ended, waiting for an
		// acknowledgement lost with a replica's connection, leave writes in doubt.
		c.wantEventSince(appsv1alpha1.EventAcksLost, hung)
	}
}

// hang is how long a stalled primary stalls: longer than a failover takes, shorter than the
// kubelet's liveness probe takes to restart the server.
const hang = 20 * time.Second

// hungPrimary freezes the primary's server while the writer writes.
func (c *clusterUnderTest) hungPrimary(t *testing.T) {
	c.stalledPrimary(t, "primary hung 20 s", freeze)
}

// stalledPrimary stalls the primary with stall for hang while the writer writes: a replica takes
// over meanwhile. Once the stall ends, the old primary, which may have written what its waiting
// clients sent, is closed to writes before any of them is told its write is done, and comes back
// as a replica, rebuilt from a copy when it holds writes the new primary never had.
func (c *clusterUnderTest) stalledPrimary(t *testing.T, fault string, stall func(*testing.T, *corev1.Pod) (resume func())) {
	c.t = t
	c.spreadOut(t)
	w := c.startImpatientWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	old := getPod(t, c.ns, before.Status.Primary)
	resume := stall(t, old)
	stalled := time.Now()
	defer resume()
	await.Eventually(t, time.Minute, func(context.Context) error {
		if m := c.get(); m.Status.Epoch == before.Status.Epoch {
			return fmt.Errorf("%s is still the primary", m.Status.Primary)
		}
		return nil
	})
	c.waitForAcks(w, 100)
	time.Sleep(time.Until(stalled.Add(hang)))
	resume()
	ended := time.Now()
	c.waitWhole(before.Status.Epoch)
	rejoined := time.Since(ended)
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	after := c.waitWhole(before.Status.Epoch)
	how := "came back as a replica"
	if again := getPod(t, c.ns, old.Name); again.UID != old.UID {
		how = "was rebuilt from a copy"
	}
	t.Logf("%s: %s took over from %s; %s %s %s after the stall ended; %d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
		fault, after.Status.Primary, old.Name, old.Name, how, rejoined.Round(time.Second), len(r.Acked), len(r.Failed), len(r.InDoubt),
		r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	c.record(fault, r)
}

// freeze stops the server of pod and returns what resumes it, once however often it is called.
func freeze(t *testing.T, pod *corev1.Pod) (resume func()) {
	signalMainProcess(t, pod, syscall.SIGSTOP)
	return sync.OnceFunc(func() { signalMainProcess(t, pod, syscall.SIGCONT) })
}

// rollConfig changes the servers' config while the writer writes: the replicas restart with it
// first, then the primary hands its role over and restarts last. One switchover, no failover, and
// nothing acknowledged lost; every member then runs the new config.
func (c *clusterUnderTest) rollConfig(t *testing.T) {
	c.t = t
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	connections := 200 + before.Status.Epoch
	statefulSet := func(ctx context.Context) (*appsv1.StatefulSet, error) {
		sts := &appsv1.StatefulSet{}
		return sts, k8s.Get(ctx, client.ObjectKey{Namespace: c.ns, Name: "ledger"}, sts)
	}
	old, err := statefulSet(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, "", "patch", "-n", c.ns, "mysql", "ledger", "--type", "merge", "-p",
		fmt.Sprintf(`{"spec":{"config":["max_connections=%d"]}}`, connections))
	began := time.Now()
	var after *appsv1alpha1.MySQL
	await.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		sts, err := statefulSet(ctx)
		if err != nil {
			return err
		}
		if s := sts.Status; s.UpdateRevision == old.Status.UpdateRevision || s.UpdatedReplicas != 3 || s.ReadyReplicas != 3 ||
			s.ObservedGeneration < sts.Generation {
			return fmt.Errorf("revision %s: %d of 3 members updated, %d ready", s.UpdateRevision, s.UpdatedReplicas, s.ReadyReplicas)
		}
		for _, cond := range c.get().Status.Conditions {
			if cond.Type == appsv1alpha1.ConditionProgressing && cond.Status == "True" {
				return fmt.Errorf("Progressing: %s", cond.Message)
			}
		}
		return nil
	})
	after = c.waitWhole(before.Status.Epoch)
	rolled := time.Since(began)
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	if after.Status.Epoch != before.Status.Epoch+1 {
		t.Errorf("epoch %d after the config change, from %d: want one switchover and no failover", after.Status.Epoch, before.Status.Epoch)
	}
	for _, member := range after.Status.Members {
		pod := getPod(t, c.ns, member.Name)
		var got int64
		if err := c.open(net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(appsv1alpha1.MySQLPort))).QueryRow("SELECT @@max_connections").Scan(&got); err != nil || got != connections {
			t.Errorf("%s runs max_connections %d (%v), want %d", member.Name, got, err, connections)
		}
	}
	t.Logf("the config rolled over 3 members in %s, %s primary; %d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
		rolled.Round(time.Second), after.Status.Primary, len(r.Acked), len(r.Failed), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	c.record("config change", r)
}
