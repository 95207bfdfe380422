// Package testutil holds what the envtest, end-to-end and benchmark code share: waiting for a
// condition and the table of specs the API server must reject.
package testutil

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Eventually retries check every 25 ms until it returns nil, failing the test with the last error
// after timeout.
func Eventually(t testing.TB, timeout time.Duration, check func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var err error
	for {
		if err = check(ctx); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("not reached within %s: %v", timeout, err)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// ConditionIs returns nil when conditions hold condType with status for generation.
func ConditionIs(conditions []metav1.Condition, generation int64, condType string, status metav1.ConditionStatus) error {
	c := meta.FindStatusCondition(conditions, condType)
	switch {
	case c == nil:
		return fmt.Errorf("no %s condition", condType)
	case c.ObservedGeneration != generation:
		return fmt.Errorf("%s is for generation %d, want %d", condType, c.ObservedGeneration, generation)
	case c.Status != status:
		return fmt.Errorf("%s is %s (%s: %s), want %s", condType, c.Status, c.Reason, c.Message, status)
	}
	return nil
}
