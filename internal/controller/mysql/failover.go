package mysql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// reopenOrFailOver handles a recorded primary that answers but is closed to writes: it restarted,
// or a pass stopped between recording and opening it. It is opened again only if it holds every
// transaction each replica holds; otherwise the replica that holds the most takes over.
func (r *Reconciler) reopenOrFailOver(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState) error {
	primary, _ := viewOf(state.views, p.Instance.Status.Primary)
	held := primary.Observation.Held()
	for _, v := range state.views {
		if v.Name != primary.Name && (v.Err != nil || !held.Covers(v.Observation.Held())) {
			return r.failOver(ctx, p, proc, members, state, "it restarted behind its replicas", time.Now())
		}
	}
	member := replication.Named(members, primary.Name)
	openCtx, cancel := context.WithTimeout(ctx, catchUpTimeout+replication.StepTimeout)
	defer cancel()
	if err := replication.OpenWrites(openCtx, member.DB, primary.Observation, proc.Durability, true, catchUpTimeout); err != nil {
		return fmt.Errorf("open %s to writes again: %w", primary.Name, err)
	}
	log.FromContext(ctx).Info("opened the primary to writes again", "primary", primary.Name)
	return nil
}

// failOver promotes a replica in place of the recorded primary, or says why it cannot. A failover
// blocked because a replica that may hold the last acknowledged write cannot be read goes ahead
// only when a person asked for it, accepting the loss.
func (r *Reconciler) failOver(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState, why string, detected time.Time) error {
	m := p.Instance
	old := m.Status.Primary
	replicas := replication.Except(members, old)
	if degraded := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); degraded != nil &&
		degraded.Status == metav1.ConditionTrue && degraded.Reason == appsv1alpha1.ReasonFailoverBlocked {
		detected = degraded.LastTransitionTime.Time
	}
	successor, _, err := proc.Failover(ctx, replication.Named(members, old), replicas, false)
	accepted := false
	var blocked *replication.Blocked
	if errors.As(err, &blocked) {
		asked, takeErr := r.takeRequest(ctx, p, appsv1alpha1.PromoteAnnotation)
		if takeErr != nil {
			return takeErr
		}
		if asked {
			accepted = true
			successor, err = r.promoteAcceptingDataLoss(ctx, p, proc, replication.Named(members, old), replicas, blocked)
		}
	}
	if errors.As(err, &blocked) {
		state.problemReason = appsv1alpha1.ReasonFailoverBlocked
		state.problem = fmt.Sprintf("the primary %s failed (%s) and no replica is promoted: %s", old, why, blocked.Message)
		return nil
	}
	if err != nil {
		return fmt.Errorf("fail over from %s: %w", old, err)
	}
	writable := time.Now()
	m.Status.LastFailover = &appsv1alpha1.FailoverStatus{From: old, To: successor, Reason: why, AcceptedDataLoss: accepted,
		Detected: metav1.NewTime(detected), Writable: metav1.NewTime(writable), Duration: metav1.Duration{Duration: writable.Sub(detected).Round(time.Millisecond)}}
	event.FailedOver.Emit(r.Recorder, m, nil, "%s took over from %s (%s), %s after the failure was found", successor, old, why, writable.Sub(detected).Round(time.Millisecond))
	log.FromContext(ctx).Info("failed over", "from", old, "to", successor, "reason", why, "acceptedDataLoss", accepted)
	return nil
}

// keepPrimary keeps the cluster's recorded primary taking writes: it chooses the first one, reopens
// one that restarted, or fails over from one that stopped answering, or that no replica reaches,
// for longer than spec.replication.failoverDelay. It tells whether it reopened the primary.
func (r *Reconciler) keepPrimary(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState, observe func() []replication.View) (reopened bool, err error) {
	m := p.Instance
	primary, key := m.Status.Primary, client.ObjectKeyFromObject(m)
	switch view, found := viewOf(state.views, primary); {
	case primary == "":
		return false, r.choosePrimary(ctx, p, proc, members, state)
	case !found || view.Err != nil:
		detected := time.Now()
		// One more read after a short pause, so that one lost packet is no failover.
		time.Sleep(probeInterval / 2)
		if again := observe(); slices.ContainsFunc(again, func(v replication.View) bool { return v.Name == primary && v.Err == nil }) {
			state.views = again
			r.unanswered.cleared(key)
			return false, nil
		}
		since := r.unanswered.sinceWhen(key, primary, detected)
		if wait := m.FailoverDelay() - time.Since(since); wait > 0 {
			state.problemReason = appsv1alpha1.ReasonNoPrimary
			state.problem = fmt.Sprintf("the primary %s has not answered for %s; a replica takes over if it still does not in %s (spec.replication.failoverDelay)",
				primary, time.Since(since).Round(time.Second), wait.Round(time.Second))
			return false, nil
		}
		return false, r.failOver(ctx, p, proc, members, state, "it stopped answering", since)
	case view.Observation.ReadOnly:
		r.unanswered.cleared(key)
		return true, r.reopenOrFailOver(ctx, p, proc, members, state)
	}
	r.unanswered.cleared(key)
	if err := r.releaseLostAcks(ctx, m, members, state.views); err != nil {
		return false, err
	}
	return false, r.failOverWhenCutOff(ctx, p, proc, members, state)
}
