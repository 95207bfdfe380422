package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/controller/mysql"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

// On a real node the status of a rollback and the next pass, started by what the rollback changed
// in the children, come within milliseconds: a pass may read the MySQL from a cache that does not
// show the rollback yet, and find the same failure again. It must not tell of a second rollback, with a
// second Event and count; it waits for the cache, or its write fails with a Conflict, and the pass is retried on the MySQL as
// it is.
func TestAPassOnAStaleCopyDoesNotTellOfTheRollbackAgain(t *testing.T) {
	ns := newNamespace(t)
	runningGood(t, ns, nil)
	before := testenv.Rollbacks(t, "MySQL")
	const broken = "mysql:8.4.7-broken"
	patchSpec(t, ns, fmt.Sprintf(`{"spec":{"image":%q}}`, broken))
	stale := waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, func(m *appsv1alpha1.MySQL) error {
		if ro := m.Status.Rollout; ro.LastGood == nil || ro.UpdateRevision == ro.LastGood.Name {
			return errors.New("the rollout of the new image is not in the status yet")
		}
		return nil
	})
	serverFails(t, ns, imageIs(broken), appsv1alpha1.ReasonImagePullBackOff)
	rolledBack(t, ns)
	counted := testenv.CountedRollback(t, "MySQL", before)

	var told testenv.ToldRollbacks
	c := testenv.OperatorClient("mysql")
	c.Client = testenv.StaleReads{Client: c.Client, Stale: stale}
	r := &mysql.Reconciler{Client: c, Recorder: &told}
	result, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stale)})
	// Moments after the status write the pass waits for the cache to show it; later, its own write
	// is refused with a Conflict.
	if waited := err == nil && result.RequeueAfter > 0; !waited && !apierrors.IsConflict(err) {
		t.Errorf("a pass on a stale copy returned %+v, %v; want it to wait for the cache, or a Conflict", result, err)
	}
	if told != 0 || testenv.Rollbacks(t, "MySQL") != counted {
		t.Errorf("a pass on a stale copy told of %d rollbacks, and the count went from %v to %v; want none", told, counted, testenv.Rollbacks(t, "MySQL"))
	}
	if ro := get(t, ns, "db", &appsv1alpha1.MySQL{}).Status.Rollout; ro.Rollbacks != 1 {
		t.Errorf("status.rollout.rollbacks = %d, want 1", ro.Rollbacks)
	}
}
