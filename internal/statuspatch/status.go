package statuspatch

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Patch writes the status of obj when it differs from the status of original, as a merge
// patch of the status subresource: one write, no resourceVersion, so it never conflicts.
func Patch[T client.Object](ctx context.Context, c client.Client, original, obj T, status func(T) any) error {
	return patchStatus(ctx, c, original, obj, status)
}

// PatchOnce is Patch on the resourceVersion the pass read, for a status that records
// a decision to be made once. The cache may not show yet the status the pass before wrote: a pass
// that read such a stale copy would make the same decision again, and its write now fails with a
// Conflict, to be retried on the object as it is.
func PatchOnce[T client.Object](ctx context.Context, c client.Client, original, obj T, status func(T) any) error {
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
	if err == nil {
		// The client decoded the API server's answer into obj: the cache will show this status.
		writtenStatus.remember(obj.GetUID(), status(obj))
	}
	return nil
}

// CatchUp is how long a pass that found the cache behind waits before it runs again.
const CatchUp = 100 * time.Millisecond

// statusLagLimit bounds how long a cache is taken to be behind the status last written: past it,
// another writer must have changed the status, and passes run on what the cache shows.
const statusLagLimit = 2 * time.Second

// Behind is true when obj, read from the cache, does not show yet the status status that this
// process last wrote for it, a moment ago. A pass run on it would judge from the state before that
// write: it could leave the server with a status it has already corrected (a merge patch from the
// stale copy omits the fields the stale copy and the new status share), or skip the write the server
// needs, with no event to come and correct it, since the write's own event starts no pass. The
// caller runs the pass again after CatchUp instead.
func Behind(obj client.Object, status any) bool {
	return writtenStatus.behind(obj.GetUID(), status, time.Now())
}

// Forget drops what is remembered of the status written for the object of uid, once it is
// deleted.
func Forget(uid types.UID) { writtenStatus.forget(uid) }

// writtenStatus is a digest of the last status this process wrote, by object.
var writtenStatus = statusDigests{byUID: map[types.UID]statusDigest{}}

type statusDigest struct {
	sum uint64
	at  time.Time
}

type statusDigests struct {
	mu    sync.Mutex
	byUID map[types.UID]statusDigest
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
		d.byUID[uid] = statusDigest{sum: sum, at: time.Now()}
	} else {
		delete(d.byUID, uid)
	}
}

func (d *statusDigests) behind(uid types.UID, status any, now time.Time) bool {
	d.mu.Lock()
	written, ok := d.byUID[uid]
	d.mu.Unlock()
	if !ok || now.Sub(written.at) > statusLagLimit {
		return false
	}
	sum, ok := digest(status)
	if ok && sum == written.sum {
		// Caught up: the passes to come need not hash the status again.
		d.forget(uid)
		return false
	}
	return ok
}

func (d *statusDigests) forget(uid types.UID) {
	d.mu.Lock()
	delete(d.byUID, uid)
	d.mu.Unlock()
}
