package apply

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteExactly deletes obj, and only that object: its name may already belong to a replacement,
// which a cache that lags behind does not show yet. It tells whether this call deleted it; an
// object already gone or replaced is no error.
func DeleteExactly(ctx context.Context, c client.Client, obj client.Object, opts ...client.DeleteOption) (bool, error) {
	uid := obj.GetUID()
	err := c.Delete(ctx, obj, append(opts, client.Preconditions{UID: &uid})...)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}
