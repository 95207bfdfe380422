package testenv

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// Reconciles is how many passes the named controller of the operator running in this process has
// run so far, as controller-runtime counts them.
func Reconciles(t *testing.T, controller string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, family := range families {
		if family.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "controller" && label.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// SettledReconciles is Reconciles once the count has not moved for a second: the passes that the
// controller's own last writes cause (its status write is an event too) are over.
func SettledReconciles(t *testing.T, controller string) float64 {
	t.Helper()
	last := Reconciles(t, controller)
	await.Eventually(t, 30*time.Second, func(context.Context) error {
		time.Sleep(time.Second)
		now := Reconciles(t, controller)
		if now != last {
			last = now
			return fmt.Errorf("%s still passing", controller)
		}
		return nil
	})
	return last
}

// Rollbacks is appkeeper_rollouts_rolled_back_total for kind, as the operator running in this
// process has counted it so far.
func Rollbacks(t *testing.T, kind string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if family.GetName() != "appkeeper_rollouts_rolled_back_total" {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "kind" && label.GetValue() == kind {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// CountedRollback waits until the rollbacks of kind the operator counted reach before+1, the one
// rollback a test caused since it read before, and returns that count. The operator counts a
// rollback once its status write has returned, so a test that has just read that status may read
// the counter a moment too early.
func CountedRollback(t *testing.T, kind string, before float64) float64 {
	t.Helper()
	await.Eventually(t, 20*time.Second, func(context.Context) error {
		if got := Rollbacks(t, kind); got != before+1 {
			return fmt.Errorf("%v rollbacks of %s counted, want %v", got, kind, before+1)
		}
		return nil
	})
	return before + 1
}

// StaleReads reads Stale as it was when the test took it, as an informer cache that has not yet
// seen the writes since does, and every other object as Client does: a pass run on it is the pass
// that comes right after a write, before the cache has it.
type StaleReads struct {
	client.Client
	Stale client.Object
}

// Get reads obj from Stale when obj is that object.
func (c StaleReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if reflect.TypeOf(obj) == reflect.TypeOf(c.Stale) && key == client.ObjectKeyFromObject(c.Stale) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.Stale.DeepCopyObject()).Elem())
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// ToldRollbacks is the Event recorder of a pass a test runs itself: it counts the RolledBack
// Events the pass tells of and drops the others.
type ToldRollbacks int

// Eventf counts a RolledBack Event.
func (n *ToldRollbacks) Eventf(_, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	if reason == appsv1alpha1.EventRolledBack {
		*n++
	}
}

// ChangesNothing waits until controller has made passes more passes than since (a Reconciles
// count), then checks for 3 s that state still reads before: those passes wrote nothing.
func ChangesNothing(t *testing.T, controller string, since, passes float64, before string, state func() string) {
	t.Helper()
	await.Eventually(t, 30*time.Second, func(context.Context) error {
		if got := Reconciles(t, controller); got < since+passes {
			return fmt.Errorf("%v passes of %s, want %v", got-since, controller, passes)
		}
		return nil
	})
	for range 6 {
		time.Sleep(500 * time.Millisecond)
		if after := state(); after != before {
			t.Fatalf("%s changed what it manages: %s -> %s", controller, before, after)
		}
	}
}
