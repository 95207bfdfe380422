package mysql

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// primaryFaults remembers, by cluster, since when its primary has had one fault (it has not
// answered, say, or no replica receives from it), so that a failover waits for
// spec.replication.failoverDelay across passes. An operator that restarts forgets, and waits the
// whole delay again: it never fails over sooner than asked.
type primaryFaults struct {
	mu    sync.Mutex
	since map[types.NamespacedName]primaryFault
}

type primaryFault struct {
	primary string
	since   time.Time
}

// sinceWhen records that primary of the cluster key had the fault at seen, and returns since when
// it has had it.
func (f *primaryFaults) sinceWhen(key types.NamespacedName, primary string, seen time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.since == nil {
		f.since = map[types.NamespacedName]primaryFault{}
	}
	if last, ok := f.since[key]; ok && last.primary == primary {
		return last.since
	}
	f.since[key] = primaryFault{primary: primary, since: seen}
	return seen
}

// cleared forgets the fault of the primary of the cluster key.
func (f *primaryFaults) cleared(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.since, key)
}
