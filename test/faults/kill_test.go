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
	for _, gap := range killGaps {
		time.Sleep(gap)
		s.ops[0].Kill(context.Background())
	}
	converged := waitConverged(t, s.ns)
	if restarts := s.ops[0].Restarts(); restarts < len(killGaps) {
		t.Errorf("the operator was restarted %d times after %d kills", restarts, len(killGaps))
	}
	s.finish(summary{
		converged: []time.Duration{converged},
		notes:     fmt.Sprintf("%d SIGKILLs 1–2 s apart from the creation of %d instances on", len(killGaps), perKind*len(kinds)),
	}, nil)
}
