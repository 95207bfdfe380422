package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus writes the status of obj when it differs from the status of original, as a merge
// patch of the status subresource: one write, no resourceVersion, so it never conflicts.
//
// original is the copy the pass read from the cache, which may not hold yet the status the pass
// before wrote. A pass that trusted it could skip a write the server needs, or send a patch that
// leaves a field the server holds from that write: with nothing else changing, no event would come
// to correct it. So when the cache does not show the status this process last wrote, the server's
// copy is read and the patch is made against it.
func PatchStatus[T client.Object](ctx context.Context, c Client, original, obj T, status func(T) any) error {
	base, err := statusBase(ctx, c, original, status)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(status(base), status(obj)) {
		return nil
	}
	// The patch names the status alone: the base may be another copy of the object than obj.
	patch, err := statusMergePatch(status(base), status(obj))
	if err != nil {
		return fmt.Errorf("status patch of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return writeStatus(ctx, c, obj, patch, status)
}

// PatchStatusOnce is PatchStatus on the resourceVersion the pass read, for a status that records
// a decision to be made once. The cache may not show yet the status the pass before wrote: a pass
// that read such a stale copy would make the same decision again, and its write now fails with a
// Conflict, to be retried on the object as it is.
func PatchStatusOnce[T client.Object](ctx context.Context, c Client, original, obj T, status func(T) any) error {
	if equality.Semantic.DeepEqual(status(original), status(obj)) {
		return nil
	}
	return writeStatus(ctx, c, obj, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{}), status)
}

func statusMergePatch(from, to any) (client.Patch, error) {
	before, err := json.Marshal(map[string]any{"status": from})
	if err != nil {
		return nil, err
	}
	after, err := json.Marshal(map[string]any{"status": to})
	if err != nil {
		return nil, err
	}
	data, err := jsonpatch.CreateMergePatch(before, after)
	return client.RawPatch(types.MergePatchType, data), err
}

func writeStatus[T client.Object](ctx context.Context, c Client, obj T, patch client.Patch, status func(T) any) error {
	err := c.Status().Patch(ctx, obj, patch)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("write status of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	if err == nil {
		writtenStatus.remember(obj.GetUID(), status(obj))
	}
	return nil
}

// statusBase is the copy of the object whose status the server holds: original when its status is
// the one this process last wrote (or it wrote none), else the object as the API server has it.
func statusBase[T client.Object](ctx context.Context, c Client, original T, status func(T) any) (T, error) {
	if writtenStatus.shows(original.GetUID(), status(original)) || c.APIReader == nil {
		return original, nil
	}
	fresh := original.DeepCopyObject().(T)
	if err := c.APIReader.Get(ctx, client.ObjectKeyFromObject(original), fresh); err != nil {
		return original, client.IgnoreNotFound(err)
	}
	return fresh, nil
}

// ForgetStatus drops what is remembered of the status written for the object of uid, once it is
// deleted.
func ForgetStatus(uid types.UID) { writtenStatus.forget(uid) }

// writtenStatus is a digest of the last status this process wrote, by object.
var writtenStatus = statusDigests{byUID: map[types.UID]uint64{}}

type statusDigests struct {
	mu    sync.Mutex
	byUID map[types.UID]uint64
}

func digest(status any) (uint64, bool) {
	raw, err := json.Marshal(status)
	if err != nil {
		return 0, false
	}
	h := fnv.New64a()
	_, _ = h.Write(raw)
	return h.Sum64(), true
}

func (d *statusDigests) remember(uid types.UID, status any) {
	sum, ok := digest(status)
	d.mu.Lock()
	defer d.mu.Unlock()
	if ok {
		d.byUID[uid] = sum
	} else {
		delete(d.byUID, uid)
	}
}

// shows is true when status is the one last written for uid, or when none was.
func (d *statusDigests) shows(uid types.UID, status any) bool {
	d.mu.Lock()
	want, written := d.byUID[uid]
	d.mu.Unlock()
	if !written {
		return true
	}
	sum, ok := digest(status)
	return ok && sum == want
}

func (d *statusDigests) forget(uid types.UID) {
	d.mu.Lock()
	delete(d.byUID, uid)
	d.mu.Unlock()
}
