package reconcile

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus writes the status of obj when it differs from the status of original, as a merge
// patch of the status subresource: one write, no resourceVersion, so it never conflicts.
func PatchStatus[T client.Object](ctx context.Context, c client.Client, original, obj T, status func(T) any) error {
	if equality.Semantic.DeepEqual(status(original), status(obj)) {
		return nil
	}
	err := c.Status().Patch(ctx, obj, client.MergeFrom(original))
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("write status of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
