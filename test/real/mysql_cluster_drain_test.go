//go:build real

package real

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// drainSwitchesOver: a drain of the primary's node, while the writer writes. The primary's
// eviction is refused until the operator has switched over to a replica on a node that takes
// pods; the eviction, retried as kubectl drain retries it, then goes through, the old primary's pod
// comes back on another node as a replica, and every member holds every acknowledged row.
func (c *clusterUnderTest) drainSwitchesOver(t *testing.T) {
	c.t = t
	w := c.startWriter(t, writerConnections)
	c.waitForAcks(w, 100)
	before := c.get()
	primary := getPod(t, c.ns, before.Status.Primary)
	node := primary.Spec.NodeName
	setUnschedulable(t, node, true)
	t.Cleanup(func() { setUnschedulable(t, node, false) })
	cordoned := time.Now()
	refused := 0
	await.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		err := testcluster.Evict(ctx, k8s, primary)
		if apierrors.IsTooManyRequests(err) {
			refused++
		}
		return err
	})
	evicted := time.Since(cordoned)
	// The evicted member comes back on another node, and catches up as a replica.
	var back *corev1.Pod
	await.Eventually(t, timeout, func(ctx context.Context) error {
		back = &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(primary), back); err != nil {
			return err
		}
		if back.UID == primary.UID || back.Spec.NodeName == "" {
			return fmt.Errorf("pod %s is not made again yet", primary.Name)
		}
		for _, cond := range back.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("pod %s on %s is not Ready yet", back.Name, back.Spec.NodeName)
	})
	setUnschedulable(t, node, false)
	after := c.waitWhole(before.Status.Epoch)
	if moved := getPod(t, c.ns, after.Status.Primary); moved.Spec.NodeName == node {
		t.Errorf("the primary %s is on %s, the node drained", moved.Name, node)
	}
	if back.Spec.NodeName == node {
		t.Errorf("the evicted %s came back on %s, cordoned", back.Name, node)
	}
	c.waitForAcks(w, 100)
	r := w.Stop()
	c.issued = r.Issued
	t.Logf("%s took over from %s on the drained %s; the eviction refused %d times, allowed %s after the cordon; %d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
		after.Status.Primary, before.Status.Primary, node, refused, evicted.Round(time.Millisecond),
		len(r.Acked), len(r.Failed), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
	c.checkEveryMember(after, r)
	c.record("drain of the primary's node", r)
}

// drainWaits: a drain never evicts the primary while it is ready. With every node cordoned no
// replica runs on a node that takes pods, so the primary stays, the operator says that the drain
// waits, and the primary's eviction is still refused.
func (c *clusterUnderTest) drainWaits(t *testing.T) {
	before := c.get()
	primary := getPod(t, c.ns, before.Status.Primary)
	if err := testcluster.Evict(context.Background(), k8s, primary); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("the eviction of the primary %s = %v, want it refused (429)", primary.Name, err)
	}
	for _, node := range cluster.RealNodeNames() {
		setUnschedulable(t, node, true)
		t.Cleanup(func() { setUnschedulable(t, node, false) })
	}
	await.WantEvents(t, k8s, c.ns, time.Minute, "DrainWaiting")
	if err := testcluster.Evict(context.Background(), k8s, primary); !apierrors.IsTooManyRequests(err) {
		t.Errorf("the eviction of the primary %s on its cordoned node = %v, want it refused (429)", primary.Name, err)
	}
	for _, node := range cluster.RealNodeNames() {
		setUnschedulable(t, node, false)
	}
	if after := c.get(); after.Status.Primary != before.Status.Primary || after.Status.Epoch != before.Status.Epoch {
		t.Errorf("the primary moved from %s (epoch %d) to %s (epoch %d) with no node to go to",
			before.Status.Primary, before.Status.Epoch, after.Status.Primary, after.Status.Epoch)
	}
}
