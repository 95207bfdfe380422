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
	return patchStatus(ctx, c, original, obj, status)
}

// PatchStatusOnce is PatchStatus on the resourceVersion the pass read, for a status that records
// a decision to be made once. The cache may not show yet the status the pass before wrote: a pass
// that read such a stale copy would make the same decision again, and its write now fails with a
// Conflict, to be retried on the object as it is.
func PatchStatusOnce[T client.Object](ctx context.Context, c client.Client, original, obj T, status func(T) any) error {
	return patchStatus(ctx, c, original, obj, status, client.MergeFromWithOptimisticLock{})
}

func patchStatus[T client.Object](ctx context.Context, c client.Client, original, obj T, status func(T) any, opts ...client.MergeFromOption) error {
	if equality.Semantic.DeepEqual(status(original), status(obj)) {
		return nil
	}
	err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(original, opts...))
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("write status of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
