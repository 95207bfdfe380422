package await

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually retries check every 25 ms until it returns nil, failing the test with the last error
// after timeout.
func Eventually(t testing.TB, timeout time.Duration, check func(ctx context.Context) error) {
	t.Helper()
	var err error
	if wait.PollUntilContextTimeout(context.Background(), 25*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err = check(ctx)
		return err == nil, nil
	}) != nil {
		t.Fatalf("not reached within %s: %v", timeout, err)
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
