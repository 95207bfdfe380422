package testutil

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

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

// RolledBack returns nil when st shows revision failed rolled back to revision good, after
// rollbacks rollbacks in all: the pods run good, the spec still asks for failed.
func RolledBack(st appsv1alpha1.RolloutStatus, failed, good string, rollbacks int32) error {
	switch {
	case st.Failed == nil:
		return fmt.Errorf("no failed revision in %+v", st)
	case st.Failed.Name != failed:
		return fmt.Errorf("failed revision %s, want %s", st.Failed.Name, failed)
	case st.LastGood == nil || st.LastGood.Name != good:
		return fmt.Errorf("last good revision %+v, want %s", st.LastGood, good)
	case st.CurrentRevision != good || st.UpdateRevision != failed:
		return fmt.Errorf("current/update revision %s/%s, want %s/%s", st.CurrentRevision, st.UpdateRevision, good, failed)
	case st.Rollbacks != rollbacks:
		return fmt.Errorf("%d rollbacks, want %d", st.Rollbacks, rollbacks)
	}
	return nil
}

// WantRolledBackEvent waits until namespace ns holds exactly one Warning Event RolledBack, and
// requires its note to name the failed and the restored revision.
func WantRolledBackEvent(t *testing.T, c client.Client, ns string, timeout time.Duration, failed, restored string) {
	t.Helper()
	WaitForEvents(t, c, ns, timeout, func(events []eventsv1.Event) error {
		var notes []string
		for _, e := range events {
			if e.Reason != appsv1alpha1.EventRolledBack {
				continue
			}
			if e.Type != corev1.EventTypeWarning || e.Series != nil {
				t.Fatalf("RolledBack event of type %s, series %+v: want one Warning", e.Type, e.Series)
			}
			notes = append(notes, e.Note)
		}
		switch {
		case len(notes) == 0:
			return fmt.Errorf("no RolledBack event")
		case len(notes) > 1:
			t.Fatalf("%d RolledBack events, want 1: %q", len(notes), notes)
		case !strings.Contains(notes[0], "revision "+failed+" ") || !strings.Contains(notes[0], "revision "+restored+" "):
			t.Fatalf("RolledBack event %q does not name revisions %s and %s", notes[0], failed, restored)
		}
		return nil
	})
}

// RequireNoRolledBackEvent fails the test if namespace ns holds a RolledBack Event.
func RequireNoRolledBackEvent(t *testing.T, c client.Client, ns string) {
	t.Helper()
	events := &eventsv1.EventList{}
	if err := c.List(context.Background(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == appsv1alpha1.EventRolledBack {
			t.Errorf("RolledBack event %q", e.Note)
		}
	}
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
	Eventually(t, 30*time.Second, func(context.Context) error {
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
