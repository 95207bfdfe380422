package mysql

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// takeRequest removes a request's annotation from the MySQL, if it has it, before the request is
// acted on, so that it is acted on at most once, and tells whether it was there.
func (r *Reconciler) takeRequest(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], annotation string) (bool, error) {
	m := p.Instance
	if _, asked := m.Annotations[annotation]; !asked {
		return false, nil
	}
	patch := client.MergeFromWithOptions(m.DeepCopy(), client.MergeFromWithOptimisticLock{})
	delete(m.Annotations, annotation)
	if err := r.Client.Patch(ctx, m, patch, client.FieldOwner(r.Client.FieldOwner)); err != nil {
		return false, fmt.Errorf("take the request %s of MySQL %s/%s: %w", annotation, m.Namespace, m.Name, err)
	}
	p.Original = m.DeepCopy()
	return true, nil
}

// refusePromote refuses a promotion accepting data loss that no blocked failover took: the cluster
// has a primary, or it fails over without a person's leave.
func (r *Reconciler) refusePromote(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], state *clusterState) error {
	asked, err := r.takeRequest(ctx, p, appsv1alpha1.PromoteAnnotation)
	if err != nil || !asked {
		return err
	}
	m := p.Instance
	doing := fmt.Sprintf("%s is the primary", m.Status.Primary)
	switch {
	case m.Status.Primary == "":
		doing = "the cluster has not chosen its first primary yet"
	case state.problem != "":
		doing += "; " + state.problem
	}
	event.PromoteRefused.Emit(r.Recorder, m, nil, "a promotion accepting data loss was refused, as no failover is blocked: %s", doing)
	log.FromContext(ctx).Info("refused a promotion accepting data loss", "primary", m.Status.Primary)
	return nil
}

// promoteAcceptingDataLoss fails over, as a person asked, from a primary whose failover was
// blocked: the replica that holds the most of those that answer takes over, and what only the
// unread replicas held is lost.
func (r *Reconciler) promoteAcceptingDataLoss(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	primary replication.Member, replicas []replication.Member, blocked *replication.Blocked) (string, error) {
	m := p.Instance
	successor, _, err := proc.Failover(ctx, primary, replicas, true)
	var still *replication.Blocked
	switch {
	case errors.As(err, &still):
		event.PromoteRefused.Emit(r.Recorder, m, nil, "no replica can be promoted, even accepting data loss: %s", still.Message)
	case err == nil:
		event.PromotedAcceptingDataLoss.Emit(r.Recorder, m, nil, "%s took over from %s, as asked, accepting the loss of what only these held: %s",
			successor, primary.Name, strings.TrimPrefix(blocked.Message, replication.CannotProveNoLossPrefix))
	}
	return successor, err
}
