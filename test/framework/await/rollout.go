package await

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

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
