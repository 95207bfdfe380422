package await

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitAvailable waits until obj, an appkeeper resource of any kind, has its Available condition
// True for its current generation and every extra check passes; obj is refreshed.
func WaitAvailable(t *testing.T, c client.Client, timeout time.Duration, obj *unstructured.Unstructured, checks ...func(*unstructured.Unstructured) error) {
	t.Helper()
	Eventually(t, timeout, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		var conditions []metav1.Condition
		for _, entry := range raw {
			m, ok := entry.(map[string]any)
			if !ok {
				return fmt.Errorf("condition %v is not an object", entry)
			}
			var condition metav1.Condition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &condition); err != nil {
				return err
			}
			conditions = append(conditions, condition)
		}
		if err := ConditionIs(conditions, obj.GetGeneration(), "Available", metav1.ConditionTrue); err != nil {
			return fmt.Errorf("%s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		for _, check := range checks {
			if err := check(obj); err != nil {
				return err
			}
		}
		return nil
	})
}
