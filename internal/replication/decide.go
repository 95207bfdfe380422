package replication

import (
	"fmt"
	"slices"
	"strings"
)

// View is one member as the operator read it: its observation, or why it could not be read.
type View struct {
	Name        string
	Observation Observation
	// Err is why the member could not be read; Observation is empty then.
	Err error
}

// Reasons a failover waits for a person, as Blocked reports them.
const (
	// ReasonCannotProveNoLoss: a replica that may hold the last acknowledged write cannot be read.
	ReasonCannotProveNoLoss = "CannotProveNoLoss"
	// ReasonNoCandidate: no replica can be promoted at all.
	ReasonNoCandidate = "NoCandidate"
)

// Blocked says why no replica may be promoted.
type Blocked struct {
	Reason, Message string
}

func (b *Blocked) Error() string { return b.Message }

// Held is every transaction the member holds: what it applied and what its relay log received
// beyond that. A replica acknowledges what it received, so that is what a promotion must keep.
func (o Observation) Held() Position {
	held := o.Applied
	if o.Replica != nil {
		held = held.Newest(o.Replica.Received)
	}
	return held.Newest(o.Binlog)
}

// WroteAfter tells whether the member's binary log ends with a transaction of its own written
// after fork, where the current primary's history began: a client wrote on a replica directly,
// or a former primary committed what its replicas never received. Its own transactions up to the
// fork are the history every member shares.
func (o Observation) WroteAfter(fork Position) bool {
	last := o.Binlog[Domain]
	return last.Server == o.ServerID && last.Seq > fork.Seq(Domain)
}

// CannotProveNoLossPrefix begins the message of a failover blocked by replicas that cannot be
// read; the replicas follow it.
const CannotProveNoLossPrefix = "no replica is promoted while a replica that may hold the last acknowledged write cannot be read: "

// Successor chooses the replica to promote when the primary has failed. Semi-synchronous
// replication in MariaDB waits for one acknowledgement, from any replica, so any replica may hold
// the last acknowledged write: unless acceptDataLoss, every replica must be read, and the one that
// received the most wins, not the one that applied the most. Ties go to the first by name. A
// replica with writes of its own after fork, where the failed primary's history began, is never
// chosen.
func Successor(replicas []View, fork Position, acceptDataLoss bool) (View, error) {
	var unread, errant []string
	var candidates []View
	for _, r := range replicas {
		switch {
		case r.Err != nil:
			unread = append(unread, fmt.Sprintf("%s (%v)", r.Name, r.Err))
		case r.Observation.WroteAfter(fork):
			errant = append(errant, r.Name)
		default:
			candidates = append(candidates, r)
		}
	}
	if len(unread) > 0 && !acceptDataLoss {
		return View{}, &Blocked{Reason: ReasonCannotProveNoLoss, Message: CannotProveNoLossPrefix + strings.Join(unread, ", ")}
	}
	if len(candidates) == 0 {
		msg := "no replica can be promoted"
		if len(errant) > 0 {
			msg += "; these hold writes their primary never sent: " + strings.Join(errant, ", ")
		}
		if len(unread) > 0 {
			msg += "; these cannot be read: " + strings.Join(unread, ", ")
		}
		return View{}, &Blocked{Reason: ReasonNoCandidate, Message: msg}
	}
	slices.SortStableFunc(candidates, func(a, b View) int {
		ha, hb := a.Observation.Held().Seq(Domain), b.Observation.Held().Seq(Domain)
		switch {
		case ha > hb:
			return -1
		case ha < hb:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return candidates[0], nil
}
