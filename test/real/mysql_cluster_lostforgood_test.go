//go:build real

package real

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// primaryNodeLostForGood ends the primary's node as a power cut would, and leaves it off: a
// replica takes over at once, and the MySQL says Degraded NodeLost of the member left on the node.
// A person then deletes the node, as one does for a node that will not come back: the member is
// made again on a node left, on its own volume, and rejoins. Nothing acknowledged is lost. The
// node is then powered on again, and registers anew, for the scenarios that follow.
func (c *clusterUnderTest) primaryNodeLostForGood(t *testing.T) {
	c.t = t
	c.spreadOut(t)
	w := c.startImpatientWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	old := getPod(t, c.ns, before.Status.Primary)
	node := old.Spec.NodeName
	if err := cluster.LoseNode(node); err != nil {
		t.Fatal(err)
	}
	lost := time.Now()
	powerOn := sync.OnceFunc(func() { c.powerOn(t, node) })
	t.Cleanup(powerOn)
	await.Eventually(t, time.Minute, func(context.Context) error {
		if m := c.get(); m.Status.Epoch == before.Status.Epoch {
			return fmt.Errorf("%s is still the primary", m.Status.Primary)
		}
		return nil
	})
	c.waitForAcks(w, 100)
	tookOver := time.Since(lost)
	said := c.waitNodeLost(old.Name, node)
	found := time.Since(lost)

	if err := k8s.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	var again *corev1.Pod
	await.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		again = &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(old), again); err != nil {
			return err
		}
		if again.UID == old.UID || again.Spec.NodeName == "" || !conditions.PodReady(again) {
			return fmt.Errorf("pod %s is not made again and ready on a node left yet", old.Name)
		}
		return nil
	})
	after := c.waitWhole(before.Status.Epoch)
	rejoined := time.Since(deleted)
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	t.Logf("%s took over from %s %s after %s was lost; Degraded %s after the loss: %s; %s back on %s and a member again %s after the node was deleted; %d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
		after.Status.Primary, old.Name, tookOver.Round(100*time.Millisecond), node, found.Round(time.Second), said,
		old.Name, again.Spec.NodeName, rejoined.Round(time.Second), len(r.Acked), len(r.Failed), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	c.record("primary's node lost for good", r)
	powerOn()
}

// waitNodeLost waits until the MySQL says it is Degraded because its member pod is on the lost
// node, and returns what it says. The node lifecycle controller finds the node lost only after
// its grace period.
func (c *clusterUnderTest) waitNodeLost(pod, node string) string {
	c.t.Helper()
	var said string
	await.Eventually(c.t, 2*time.Minute, func(context.Context) error {
		cond := meta.FindStatusCondition(c.get().Status.Conditions, appsv1alpha1.ConditionDegraded)
		if cond == nil || cond.Reason != appsv1alpha1.ReasonNodeLost || !strings.HasPrefix(cond.Message, "pod "+pod+": its node "+node+" ") {
			return fmt.Errorf("Degraded %+v, want %s of pod %s on %s", cond, appsv1alpha1.ReasonNodeLost, pod, node)
		}
		said = cond.Message
		return nil
	})
	return said
}

// powerOn restarts a lost node and waits until it has registered again, Ready.
func (c *clusterUnderTest) powerOn(t *testing.T, node string) {
	if err := cluster.RestartNode(context.Background(), node); err != nil {
		t.Error(err)
		return
	}
	await.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		n := &corev1.Node{}
		if err := k8s.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
			return err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("node %s is not Ready again yet", node)
	})
}
