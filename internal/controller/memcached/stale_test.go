package memcached_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/controller/memcached"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

// A pass that reads the Memcached from a cache that does not show the rollback the pass before
// wrote finds the same failure again: it must not tell of a second rollback, with a second Event
// and count; it waits for the cache, or its write fails with a Conflict, and the pass is retried on the Memcached as it is.
func TestAPassOnAStaleCopyDoesNotTellOfTheRollbackAgain(t *testing.T) {
	ns := newNamespace(t)
	runningGood(t, ns, nil)
	before := testenv.Rollbacks(t, "Memcached")
	patch(t, ns, `{"spec":{"image":"`+badImage+`"}}`)
	stale := waitMemcached(t, ns, func(mc *appsv1alpha1.Memcached) error {
		if ro := mc.Status.Rollout; ro.LastGood == nil || ro.UpdateRevision == ro.LastGood.Name {
			return errors.New("the rollout of the new image is not in the status yet")
		}
		return nil
	})
	setRevisions(t, ns, badImage, revGood, revBad, 1, 0)
	startMember(t, ns, "cache-1", revBad, false, appsv1alpha1.ReasonImagePullBackOff)
	waitMemcached(t, ns, degradedIs(metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack))
	counted := testenv.CountedRollback(t, "Memcached", before)
	// The failed member is still there, as it is until the StatefulSet shows the restored revision.
	get(t, ns, "cache-1", &corev1.Pod{})

	var told testenv.ToldRollbacks
	c := testenv.OperatorClient("memcached")
	c.Client = testenv.StaleReads{Client: c.Client, Stale: stale}
	r := &memcached.Reconciler{Client: c, Recorder: &told}
	result, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stale)})
	// Moments after the status write the pass waits for the cache to show it; later, its own write
	// is refused with a Conflict.
	if waited := err == nil && result.RequeueAfter > 0; !waited && !apierrors.IsConflict(err) {
		t.Errorf("a pass on a stale copy returned %+v, %v; want it to wait for the cache, or a Conflict", result, err)
	}
	if told != 0 || testenv.Rollbacks(t, "Memcached") != counted {
		t.Errorf("a pass on a stale copy told of %d rollbacks, and the count went from %v to %v; want none", told, counted, testenv.Rollbacks(t, "Memcached"))
	}
	if ro := get(t, ns, "cache", &appsv1alpha1.Memcached{}).Status.Rollout; ro.Rollbacks != 1 {
		t.Errorf("status.rollout.rollbacks = %d, want 1", ro.Rollbacks)
	}
}
