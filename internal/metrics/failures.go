package metrics

import (
	"k8s.io/apimachinery/pkg/types"
)

// failureTally keeps appkeeper_backup_failures_total a counter although it is read from the
// backups that exist: retention deletes failed backups, and a count that went down would read as
// a counter reset, that is as new failures. Each failed backup is counted once, the first time a
// collection sees it; only the failed backups still there are remembered, so the memory is bounded
// by them. The count starts, when the operator starts, at the failed backups there are. Collections
// use it one at a time.
type failureTally struct {
	generation uint64
	resources  map[resourceKey]*failures
}

type failures struct {
	total float64
	seen  map[types.UID]struct{}
	// generation is the last collection that saw the resource.
	generation uint64
}

func newFailureTally() *failureTally {
	return &failureTally{resources: map[resourceKey]*failures{}}
}

// begin starts a collection.
func (t *failureTally) begin() {
	t.generation++
}

// count is the failures of the resource k so far, whose failed backups are now failed.
func (t *failureTally) count(k resourceKey, failed []types.UID) float64 {
	f := t.resources[k]
	if f == nil {
		f = &failures{}
		t.resources[k] = f
	}
	f.generation = t.generation
	if len(failed) == 0 && len(f.seen) == 0 {
		return f.total
	}
	seen := make(map[types.UID]struct{}, len(failed))
	for _, uid := range failed {
		if _, counted := f.seen[uid]; !counted {
			f.total++
		}
		seen[uid] = struct{}{}
	}
	f.seen = seen
	return f.total
}

// end forgets the resources this collection did not see: they are deleted, and their series with
// them.
func (t *failureTally) end() {
	for k, f := range t.resources {
		if f.generation != t.generation {
			delete(t.resources, k)
		}
	}
}
