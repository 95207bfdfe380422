//go:build faults

package faults

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// killGaps are the pauses before each SIGKILL of the operator, about 1 to 2 s apart.
var killGaps = []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second, 1250 * time.Millisecond, 1750 * time.Millisecond}

// The operator is killed five times while it creates every instance's children: each run starts
// from what the API server holds, and none of them makes a child twice, runs a PodSet pod too
// many, or makes new passwords or volumes for an instance that has them.
func TestOperatorKilled(t *testing.T) {
	s := begin(t, "operator-killed", 1)
	createSet(t, s.ns)
	kills := 0
	for _, gap := range killGaps {
		time.Sleep(gap)
		if s.ops[0].Kill(context.Background()) {
			kills++
		}
	}
	killed := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), convergeTimeout)
	defer cancel()
	if err := s.ops[0].WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if kills != len(killGaps) || s.ops[0].Restarts() != kills {
		t.Errorf("%d of %d kills found the operator running; it was restarted %d times", kills, len(killGaps), s.ops[0].Restarts())
	}
	waitConverged(t, s.ns)
	s.finish(summary{
		converged: []time.Duration{time.Since(killed)},
		notes: fmt.Sprintf("%d SIGKILLs 1–2 s apart from the creation of %d instances on; the time includes the last restart",
			kills, perKind*len(kinds)),
	}, nil)
}
