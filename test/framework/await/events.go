package await

import (
	"context"
	"fmt"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitForEvents waits until check accepts the Events of namespace ns.
func WaitForEvents(t *testing.T, c client.Client, ns string, timeout time.Duration, check func([]eventsv1.Event) error) {
	t.Helper()
	Eventually(t, timeout, func(ctx context.Context) error {
		events := &eventsv1.EventList{}
		if err := c.List(ctx, events, client.InNamespace(ns)); err != nil {
			return err
		}
		return check(events.Items)
	})
}

// WantEvents waits until namespace ns holds an Event of every one of reasons.
func WantEvents(t *testing.T, c client.Client, ns string, timeout time.Duration, reasons ...string) {
	t.Helper()
	WaitForEvents(t, c, ns, timeout, func(events []eventsv1.Event) error {
		seen := map[string]bool{}
		for _, e := range events {
			seen[e.Reason] = true
		}
		for _, r := range reasons {
			if !seen[r] {
				return fmt.Errorf("no %s event among %v", r, seen)
			}
		}
		return nil
	})
}
