//go:build real

package real

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// drainWaits: a drain never evicts the primary while it is ready. On one node no replica runs on a
// node that takes pods, so when the node is cordoned the primary stays, the operator says that the
// drain waits, and the primary's eviction is still refused.
func (c *clusterUnderTest) drainWaits(t *testing.T) {
	before := c.get()
	primary := getPod(t, c.ns, before.Status.Primary)
	if err := testcluster.Evict(context.Background(), k8s, primary); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("the eviction of the primary %s = %v, want it refused (429)", primary.Name, err)
	}
	setUnschedulable(t, primary.Spec.NodeName, true)
	t.Cleanup(func() { setUnschedulable(t, primary.Spec.NodeName, false) })
	await.WantEvents(t, k8s, c.ns, time.Minute, "DrainWaiting")
	if err := testcluster.Evict(context.Background(), k8s, primary); !apierrors.IsTooManyRequests(err) {
		t.Errorf("the eviction of the primary %s on its cordoned node = %v, want it refused (429)", primary.Name, err)
	}
	setUnschedulable(t, primary.Spec.NodeName, false)
	if after := c.get(); after.Status.Primary != before.Status.Primary || after.Status.Epoch != before.Status.Epoch {
		t.Errorf("the primary moved from %s (epoch %d) to %s (epoch %d) with no node to go to",
			before.Status.Primary, before.Status.Epoch, after.Status.Primary, after.Status.Epoch)
	}
}

// setUnschedulable cordons node, as kubectl cordon does, or uncordons it.
func setUnschedulable(t *testing.T, node string, cordoned bool) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, cordoned))
	if err := k8s.Patch(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}
