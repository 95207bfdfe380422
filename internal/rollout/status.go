package rollout

import (
	"context"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/statuspatch"
)

// WriteStatus writes the status of obj, as statuspatch.Patch does, then counts the rollout
// d started, completed or rolled back for kind and tells of a rollback (Record). Such a status is
// written only over the copy the pass read (statuspatch.PatchOnce), and counted and told of
// only once written: a second pass that read the object before the cache had the first one's
// status would otherwise decide the same again, with a second Event and a second count.
func WriteStatus[T client.Object](ctx context.Context, c client.Client, recorder events.EventRecorder, kind string,
	original, obj T, d Decision, status func(T) any) error {
	if !d.counts() {
		return statuspatch.Patch(ctx, c, original, obj, status)
	}
	if err := statuspatch.PatchOnce(ctx, c, original, obj, status); err != nil {
		return err
	}
	d.count(kind)
	Record(ctx, recorder, obj, d)
	return nil
}
