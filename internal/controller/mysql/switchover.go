package mysql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// switchoverCatchUp bounds how long a switchover keeps the primary closed to writes while the
// chosen replica applies the last of them; past it the old primary opens again.
const switchoverCatchUp = 5 * time.Second

// maxSwitchoverLag is how far behind, in seconds, a replica may apply and still be switched to.
const maxSwitchoverLag = 1

// handleSwitchover takes a switchover request, if the MySQL has one: it removes the annotation
// first, so that a request is acted on at most once, then switches or refuses, and records the
// outcome in the status and an Event.
func (r *Reconciler) handleSwitchover(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState) error {
	m := p.Instance
	requested := m.Annotations[appsv1alpha1.SwitchoverAnnotation]
	if asked, err := r.takeRequest(ctx, p, appsv1alpha1.SwitchoverAnnotation); err != nil || !asked {
		return err
	}
	outcome := appsv1alpha1.SwitchoverStatus{Requested: requested, From: m.Status.Primary, To: m.Status.Primary,
		Result: appsv1alpha1.SwitchoverRefused, Time: metav1.Now()}
	to, refusal := switchoverTarget(m, requested, state)
	if refusal == "" {
		began := time.Now()
		if err := r.switchTo(ctx, p, proc, members, to); err != nil {
			refusal = err.Error()
		} else {
			outcome.To, outcome.Result = to, appsv1alpha1.SwitchoverDone
			outcome.Message = fmt.Sprintf("%s took over from %s; writes were closed for %s", to, outcome.From, time.Since(began).Round(time.Millisecond))
		}
	}
	if refusal != "" {
		outcome.Message = refusal
		event.SwitchoverRefused.Emit(r.Recorder, m, nil, "switchover to %s refused: %s", requested, refusal)
	} else {
		event.SwitchedOver.Emit(r.Recorder, m, nil, "%s", outcome.Message)
	}
	log.FromContext(ctx).Info("switchover", "requested", requested, "result", outcome.Result, "message", outcome.Message)
	m.Status.LastSwitchover = &outcome
	return nil
}

// switchoverTarget is the member a request names, or the reason it cannot be switched to.
func switchoverTarget(m *appsv1alpha1.MySQL, requested string, state *clusterState) (string, string) {
	if !m.Clustered() {
		return "", "a MySQL of one member has no replica to switch to"
	}
	if !primaryOpen(m, state.views) || state.problem != "" {
		return "", "the cluster has no writable primary to switch from" + suffix(state.problem)
	}
	primary, _ := viewOf(state.views, m.Status.Primary)
	if requested == appsv1alpha1.SwitchoverToAny {
		best := bestSwitchable(m, state.views, func(string) bool { return true })
		if best == nil {
			return "", "no replica is in step with the primary"
		}
		return best.Name, ""
	}
	v, found := viewOf(state.views, requested)
	switch {
	case !found:
		names := make([]string, 0, len(state.views))
		for _, v := range state.views {
			names = append(names, v.Name)
		}
		return "", fmt.Sprintf("%s is no member; the members are %s", requested, strings.Join(names, ", "))
	case requested == primary.Name:
		return "", requested + " is the primary already"
	}
	if why := switchable(v); why != "" {
		return "", requested + " " + why
	}
	return requested, ""
}

// switchable is empty for a replica that receives and applies without error and is at most
// maxSwitchoverLag behind, or says what it is not.
func switchable(v replication.View) string {
	if v.Err != nil {
		return "cannot be read: " + describeMemberError(v.Err)
	}
	r := v.Observation.Replica
	switch {
	case r == nil:
		return "does not replicate"
	case r.Receiving != "Yes" || !r.Applying:
		return "does not replicate now" + suffix(replicationError(r))
	case r.SecondsBehind < 0 || r.SecondsBehind > maxSwitchoverLag:
		return fmt.Sprintf("lags %d s behind the primary", r.SecondsBehind)
	}
	return ""
}

// switchTo hands the primary's role to the member to.
func (r *Reconciler) switchTo(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, to string) error {
	primary := p.Instance.Status.Primary
	others := replication.Except(members, primary, to)
	proc.CatchUp = switchoverCatchUp
	ctx, cancel := context.WithTimeout(ctx, switchoverCatchUp+3*replication.StepTimeout)
	defer cancel()
	_, err := proc.Switchover(ctx, replication.Named(members, primary), replication.Named(members, to), others)
	var unpointed *replication.FollowError
	if errors.As(err, &unpointed) {
		// to is the primary and takes writes: the switchover is done, and the next passes point
		// the members that did not follow yet, as for any member that does not follow.
		log.FromContext(ctx).Info("switched over; some members follow the new primary only from a later pass", "primary", to, "error", err.Error())
		return nil
	}
	return err
}

func suffix(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + detail
}
