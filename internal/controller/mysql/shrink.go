package mysql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// memberSlots is how many members a cluster runs now: those the spec asks for, and those of a
// smaller spec that are not removed yet.
func memberSlots(m *appsv1alpha1.MySQL, sts *appsv1.StatefulSet) int32 {
	if sts == nil || sts.Spec.Replicas == nil || !m.Clustered() {
		return m.MemberCount()
	}
	return max(m.MemberCount(), *sts.Spec.Replicas)
}

// removeMembers takes the members a smaller spec.members leaves out off the StatefulSet, highest
// ordinals first, once it is safe: the primary is not among them (it switches over to a member
// that stays first), and what each of them holds is held by a replica that stays, so that a
// failover after the removal still finds every acknowledged write.
func (r *Reconciler) removeMembers(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState, sts *appsv1.StatefulSet) error {
	m := p.Instance
	if sts == nil || memberSlots(m, sts) == m.MemberCount() || !primaryOpen(m, state.views) || state.problem != "" {
		return nil
	}
	staying := func(name string) bool {
		return slices.ContainsFunc(members[:m.MemberCount()], func(x replication.Member) bool { return x.Name == name })
	}
	if !staying(m.Status.Primary) {
		return r.switchToStayingMember(ctx, p, proc, members, state, staying)
	}
	primary, _ := viewOf(state.views, m.Status.Primary)
	var leaving []string
	for _, v := range state.views {
		if staying(v.Name) {
			continue
		}
		leaving = append(leaving, v.Name)
		// What a member that cannot be read holds is at most what the primary holds.
		held := primary.Observation.Held()
		if v.Err == nil {
			held = v.Observation.Held()
		}
		if !slices.ContainsFunc(state.views, func(s replication.View) bool {
			return staying(s.Name) && s.Name != primary.Name && s.Err == nil && s.Observation.Held().Covers(held)
		}) {
			log.FromContext(ctx).Info("a member to remove holds what no staying replica has received yet", "member", v.Name, "held", held.String())
			return nil
		}
	}
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Spec.Replicas = ptr.To(m.MemberCount())
	if err := r.Client.Patch(ctx, sts, patch, client.FieldOwner(r.Client.FieldOwner)); err != nil {
		return fmt.Errorf("remove members %s of MySQL %s/%s: %w", strings.Join(leaving, ", "), m.Namespace, m.Name, err)
	}
	event.Scaled.Emit(r.Recorder, m, nil, "removed %s: a replica that stays holds all they held", strings.Join(leaving, ", "))
	log.FromContext(ctx).Info("removed members", "members", leaving)
	return nil
}

// switchToStayingMember moves the primary's role off a member to remove, to the replica that
// stays and holds the most.
func (r *Reconciler) switchToStayingMember(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState, staying func(string) bool) error {
	m := p.Instance
	best := bestSwitchable(m, state.views, staying)
	if best == nil {
		log.FromContext(ctx).Info("no member that stays is in step with the primary to take over from it before its removal", "primary", m.Status.Primary)
		return nil
	}
	from := m.Status.Primary
	if err := r.switchTo(ctx, p, proc, members, best.Name); err != nil {
		return fmt.Errorf("switch over from %s, which is to be removed, to %s: %w", from, best.Name, err)
	}
	event.SwitchedOver.Emit(r.Recorder, m, nil, "%s took over from %s, which is to be removed", best.Name, from)
	return nil
}

// bestSwitchable is the replica the primary's role is best handed to among those accept takes:
// in step with the primary, and holding the most. Nil when there is none.
func bestSwitchable(m *appsv1alpha1.MySQL, views []replication.View, accept func(member string) bool) *replication.View {
	var best *replication.View
	for i, v := range views {
		if v.Name != m.Status.Primary && accept(v.Name) && switchable(v) == "" &&
			(best == nil || v.Observation.Held().Seq(replication.Domain) > best.Observation.Held().Seq(replication.Domain)) {
			best = &views[i]
		}
	}
	return best
}
