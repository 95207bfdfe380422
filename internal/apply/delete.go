package apply

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteExactly deletes obj, and only that object: its name may already belong to a replacement,
// which a cache that lags behind does not show yet. It tells whether this call deleted it; an
// object already gone or replaced is no error.
func DeleteExactly(ctx context.Context, c client.Client, obj client.Object, opts ...client.DeleteOption) (bool, error) {
	uid := obj.GetUID()
	return deleteIf(ctx, c, obj, client.Preconditions{UID: &uid}, opts...)
}

// DeleteUnchanged deletes obj only if it is still as read, at the same resourceVersion: a decision
// taken on what a cache showed holds for that version alone. It tells whether this call deleted
// it; an object gone, replaced or changed since is no error.
func DeleteUnchanged(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	uid, version := obj.GetUID(), obj.GetResourceVersion()
	return deleteIf(ctx, c, obj, client.Preconditions{UID: &uid, ResourceVersion: &version})
}

// deleteIf deletes obj under the preconditions, which come last as a later Preconditions option
// replaces an earlier one rather than adding to it.
func deleteIf(ctx context.Context, c client.Client, obj client.Object, preconditions client.Preconditions, opts ...client.DeleteOption) (bool, error) {
	err := c.Delete(ctx, obj, append(opts, preconditions)...)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}

// DeleteChild deletes owner's child named key, read into live, if owner is its controller. It
// tells whether this call deleted it; no object of that name, or one owner does not control, is no
// error and is left alone.
func DeleteChild(ctx context.Context, c client.Client, owner client.Object, key client.ObjectKey, live client.Object) (bool, error) {
	err := c.Get(ctx, key, live)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if ref := metav1.GetControllerOf(live); ref == nil || ref.UID != owner.GetUID() {
		return false, nil
	}
	return DeleteExactly(ctx, c, live)
}
