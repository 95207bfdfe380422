package mysql

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// cutOffBound is how long every replica may fail to receive from a primary that answers before
// one of them takes over, beyond spec.replication.failoverDelay: longer than a replica takes to
// reconnect after a restart or a change of source.
const cutOffBound = 3 * time.Second

// failOverWhenCutOff fails over from a primary that answers, writable, but from which no replica
// receives while every replica answers: a partition between it and them, say, that leaves its
// clients and the operator on its side. With durability Required its commits wait for an
// acknowledgement that cannot come, so it serves no write, and a replica that takes over loses
// nothing acknowledged. With Preferred it commits alone, and a failover would lose what it
// acknowledged: it keeps its role, and the cluster says Unprotected.
func (r *Reconciler) failOverWhenCutOff(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState) error {
	m := p.Instance
	key := client.ObjectKeyFromObject(m)
	why, cut := cutOff(state.views, replication.Named(members, m.Status.Primary))
	if !cut || proc.Durability.AckTimeout > 0 {
		r.cutOff.cleared(key)
		return nil
	}
	since := r.cutOff.sinceWhen(key, m.Status.Primary, time.Now())
	if wait := cutOffBound + m.FailoverDelay() - time.Since(since); wait > 0 {
		state.problemReason = appsv1alpha1.ReasonWritesWaiting
		state.problem = fmt.Sprintf("no replica receives from the primary %s (%s); a replica takes over if none does in %s",
			m.Status.Primary, why, wait.Round(100*time.Millisecond))
		return nil
	}
	r.cutOff.cleared(key)
	return r.failOver(ctx, p, proc, members, state, "no replica could receive from it: "+why, since)
}

// cutOff tells whether every replica answers, is pointed at primary, and does not receive from
// it, and says what each reports.
func cutOff(views []replication.View, primary replication.Member) (string, bool) {
	var reports []string
	for _, v := range views {
		if v.Name == primary.Name {
			continue
		}
		rs := v.Observation.Replica
		if v.Err != nil || rs == nil || rs.SourceHost != primary.Source.Host || rs.Receiving == "Yes" {
			return "", false
		}
		report := v.Name + " is " + strings.ToLower(rs.Receiving)
		if rs.IOError != "" {
			report += ": " + rs.IOError
		}
		reports = append(reports, report)
	}
	return strings.Join(reports, "; "), len(reports) > 0
}
