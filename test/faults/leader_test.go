//go:build faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/operatorproc"
)

const (
	// leaderKills is how many times the leading replica is killed.
	leaderKills = 5
	// leaseName is the leader election Lease the operator holds.
	leaseName = "appkeeper.apps.appkeeper.dev"
)

// Two replicas run with leader election, and the leader is killed five times, each time just
// before a spec change. The other replica takes the lease once it expires and carries the change
// out; the killed one comes back as the standby.
func TestLeaderKilled(t *testing.T) {
	s := begin(t, "leader-killed", 2)
	s.createSet()
	var took, handovers []time.Duration
	for i := range leaderKills {
		leader, holder := waitLeader(t, s.ops)
		killed := time.Now()
		leader.Kill(context.Background())
		s.scaleUp([]string{"WebServer", "PodSet"}[i%2])
		waitFor(t, "another replica to take the lease", func(ctx context.Context) error {
			if now, err := leaseHolder(ctx); err != nil || now == "" || now == holder {
				return errors.Join(err, fmt.Errorf("lease held by %q", now))
			}
			return nil
		})
		handovers = append(handovers, time.Since(killed))
		waitConverged(t, s.ns)
		took = append(took, time.Since(killed))
	}
	s.finish(summary{
		converged: took,
		notes: fmt.Sprintf("times from each SIGKILL of the leader, a WebServer or PodSet scale-up made just after; the lease changed hands after %s s",
			seconds(handovers)),
	}, nil)
}

// waitLeader waits for one replica to lead and returns it, with the identity holding the lease.
// Both replicas run on this host, and controller-runtime makes the identity from the host name and
// a random suffix, so the identity does not tell which replica it is: the replicas' own metrics do.
func waitLeader(t *testing.T, ops []*operatorproc.Supervisor) (*operatorproc.Supervisor, string) {
	t.Helper()
	var leader *operatorproc.Supervisor
	var holder string
	waitFor(t, "one replica to lead", func(ctx context.Context) error {
		leader = nil
		for _, op := range ops {
			p := op.Current()
			if p == nil {
				continue
			}
			if m, err := p.Metrics(ctx); err == nil && m.Leader {
				if leader != nil {
					return errors.New("two replicas say they lead")
				}
				leader = op
			}
		}
		var err error
		if holder, err = leaseHolder(ctx); err != nil || holder == "" || leader == nil {
			return errors.Join(err, fmt.Errorf("lease held by %q, leading replica found: %t", holder, leader != nil))
		}
		return nil
	})
	return leader, holder
}

func leaseHolder(ctx context.Context) (string, error) {
	lease := &coordinationv1.Lease{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: leaseName}, lease); err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}
