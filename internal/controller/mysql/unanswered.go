package mysql

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// unansweredPrimaries remembers, by cluster, since when its primary has failed one way (it has
// not answered, say), so that a failover waits for spec.replication.failoverDelay across passes. An operator that restarts
// forgets, and waits the whole delay again: it never fails over sooner than asked.
type unansweredPrimaries struct {
	mu    sync.Mutex
	since map[types.NamespacedName]unanswered
}

type unanswered struct {
	primary string
	since   time.Time
}

// sinceWhen records that primary of the cluster key did not answer at seen, and returns since when it
// has not answered.
func (u *unansweredPrimaries) sinceWhen(key types.NamespacedName, primary string, seen time.Time) time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.since == nil {
		u.since = map[types.NamespacedName]unanswered{}
	}
	if last, ok := u.since[key]; ok && last.primary == primary {
		return last.since
	}
	u.since[key] = unanswered{primary: primary, since: seen}
	return seen
}

// answered forgets that the primary of the cluster key did not answer.
func (u *unansweredPrimaries) answered(key types.NamespacedName) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.since, key)
}
