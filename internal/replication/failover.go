package replication

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Member is a member the operator reaches over SQL, and where replicas reach it.
type Member struct {
	Name   string
	DB     *sql.DB
	Source Source
}

// StepTimeout bounds each step on one member but a new primary's catching up: a member that
// hangs must not hold the others back.
const StepTimeout = 2 * time.Second

// Record writes down which member is primary, and the position the new history forks from,
// before that member takes a write: a pass that stops halfway then opens no other member.
type Record func(ctx context.Context, primary string, fork Position) error

// Procedure holds what every change of primary needs.
type Procedure struct {
	// Members is the number of members the cluster is meant to have: a primary of more than one
	// waits for acknowledgements even while no replica is connected.
	Members    int
	Durability Durability
	// CatchUp bounds how long the new primary may take to apply what it received.
	CatchUp time.Duration
	// OperatorUsers are the operator's own accounts, whose sessions a demotion keeps.
	OperatorUsers []string
	Record        Record
	// Fork is where the current primary's history began, as recorded when it was promoted.
	Fork Position
}

// ErrNoAddress says that a member has no address to be reached at: its pod is missing or has
// not started.
var ErrNoAddress = errors.New("the member has no address")

// ObserveAll reads every member at once.
func ObserveAll(ctx context.Context, members []Member) []View {
	views := make([]View, len(members))
	done := make(chan struct{})
	for i, m := range members {
		go func() {
			defer func() { done <- struct{}{} }()
			if m.DB == nil {
				views[i] = View{Name: m.Name, Err: ErrNoAddress}
				return
			}
			o, err := Observe(ctx, m.DB)
			views[i] = View{Name: m.Name, Observation: o, Err: err}
		}()
	}
	for range members {
		<-done
	}
	return views
}

// Failover promotes a replica in place of a primary that failed, losing no acknowledged write:
// every replica stops receiving first, so that the old primary, waiting for an acknowledgement,
// can commit nothing more; the replica that received the most applies it all; it is recorded as
// primary, then opened, and the other replicas follow it. The old primary is left alone: it
// rejoins once it answers again; if it still answers now, it is closed to writes, at best effort,
// for a client that still reaches it would otherwise wait on it. It returns the new primary and
// the fork position.
func (p Procedure) Failover(ctx context.Context, primary Member, replicas []Member, acceptDataLoss bool) (string, Position, error) {
	closing := make(chan struct{})
	go func() {
		defer close(closing)
		if primary.DB == nil {
			return
		}
		closeCtx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_ = Demote(closeCtx, primary.DB, p.OperatorUsers...)
	}()
	stopped := make(chan struct{}, len(replicas))
	for _, r := range replicas {
		go func() {
			defer func() { stopped <- struct{}{} }()
			if r.DB == nil {
				return
			}
			// A replica that cannot be stopped cannot be read either: Successor judges it.
			stepCtx, cancel := context.WithTimeout(ctx, StepTimeout)
			defer cancel()
			_ = StopReceiving(stepCtx, r.DB)
		}()
	}
	for range replicas {
		<-stopped
	}
	<-closing
	observeCtx, cancel := context.WithTimeout(ctx, StepTimeout)
	views := ObserveAll(observeCtx, replicas)
	cancel()
	chosen, err := Successor(views, p.Fork, acceptDataLoss)
	if err != nil {
		return "", nil, err
	}
	fork := chosen.Observation.Held()
	successor := Named(replicas, chosen.Name)
	if err := CatchUp(ctx, successor.DB, fork, p.CatchUp); err != nil {
		return "", nil, fmt.Errorf("promote %s: %w", successor.Name, err)
	}
	if err := p.Record(ctx, successor.Name, fork); err != nil {
		return "", nil, err
	}
	return successor.Name, fork, p.open(ctx, successor, chosen.Observation, replicas, views)
}

// Switchover hands the primary's role to the replica to, as a person or a rolling change asks:
// the primary closes to writes, to applies all it wrote, is recorded, opens, and everyone else,
// the old primary first, follows it. If to does not catch up in time, the old primary opens again.
func (p Procedure) Switchover(ctx context.Context, primary Member, to Member, others []Member) (Position, error) {
	if err := Demote(ctx, primary.DB, p.OperatorUsers...); err != nil {
		return nil, fmt.Errorf("close %s to writes: %w", primary.Name, err)
	}
	old, err := Observe(ctx, primary.DB)
	if err != nil {
		return nil, p.reopen(ctx, primary, fmt.Errorf("read %s: %w", primary.Name, err))
	}
	fork := old.Binlog
	if err := CatchUp(ctx, to.DB, fork, p.CatchUp); err != nil {
		return nil, p.reopen(ctx, primary, fmt.Errorf("switch over to %s: %w", to.Name, err))
	}
	if err := p.Record(ctx, to.Name, fork); err != nil {
		return nil, p.reopen(ctx, primary, err)
	}
	o, err := Observe(ctx, to.DB)
	if err != nil {
		return fork, err
	}
	followers := append([]Member{primary}, others...)
	observeCtx, cancel := context.WithTimeout(ctx, StepTimeout)
	views := ObserveAll(observeCtx, followers)
	cancel()
	return fork, p.open(ctx, to, o, followers, views)
}

// reopen gives writes back to a primary whose switchover failed before another was recorded.
func (p Procedure) reopen(ctx context.Context, primary Member, cause error) error {
	if err := exec(ctx, primary.DB, "SET GLOBAL read_only = OFF"); err != nil {
		return errors.Join(cause, fmt.Errorf("reopen %s: %w", primary.Name, err))
	}
	return cause
}

// FollowError names the members that could not be pointed at a new primary, which is recorded and
// open to writes all the same: they are pointed at it again later, as any member that does not
// follow the primary is.
type FollowError struct{ Errs []error }

func (e *FollowError) Error() string   { return errors.Join(e.Errs...).Error() }
func (e *FollowError) Unwrap() []error { return e.Errs }

// open opens the recorded primary and points every other reachable member at it; members it
// could not point are a *FollowError.
func (p Procedure) open(ctx context.Context, primary Member, o Observation, members []Member, views []View) error {
	if err := OpenWrites(ctx, primary.DB, o, p.Durability, p.Members > 1, p.CatchUp); err != nil {
		return fmt.Errorf("open %s to writes: %w", primary.Name, err)
	}
	var errs []error
	for i, m := range members {
		if m.Name == primary.Name || views[i].Err != nil {
			continue
		}
		stepCtx, cancel := context.WithTimeout(ctx, StepTimeout)
		err := Follow(stepCtx, m.DB, views[i].Observation, primary.Source)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("point %s at %s: %w", m.Name, primary.Name, err))
		}
	}
	if len(errs) > 0 {
		return &FollowError{Errs: errs}
	}
	return nil
}

// Named is the member of members called name, or one with that name alone.
func Named(members []Member, name string) Member {
	for _, m := range members {
		if m.Name == name {
			return m
		}
	}
	return Member{Name: name}
}

// Except is members but those named.
func Except(members []Member, names ...string) []Member {
	var others []Member
	for _, m := range members {
		if !slices.Contains(names, m.Name) {
			others = append(others, m)
		}
	}
	return others
}
