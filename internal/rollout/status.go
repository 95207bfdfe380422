package rollout

import (
	"context"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/reconcile"
)

// WriteStatus writes the status of obj, as reconcile.PatchStatus does, and then tells of the
// rollback d made, if any (Record). The status of a rollback is written only over the copy the
// pass read (reconcile.PatchStatusOnce), and told of only once written: a second pass that read
// the object before the cache had the first one's status would otherwise roll back again, with a
// second Event and a second count.
func WriteStatus[T client.Object](ctx context.Context, c client.Client, recorder events.EventRecorder, kind string,
	original, obj T, d Decision, status func(T) any) error {
	if d.RolledBack == nil {
		return reconcile.PatchStatus(ctx, c, original, obj, status)
	}
	if err := reconcile.PatchStatusOnce(ctx, c, original, obj, status); err != nil {
		return err
	}
	Record(ctx, recorder, obj, kind, d)
	return nil
}
