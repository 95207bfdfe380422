package mysql

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/statuspatch"
)

// probeInterval is how often a cluster's members are read over SQL: a primary that stops
// answering is noticed within about this and memberDialTimeout.
const probeInterval = time.Second

// catchUpTimeout bounds how long a new primary may take to apply what it had received.
const catchUpTimeout = 30 * time.Second

// clusterState is what a pass saw of a cluster's members, for the status.
type clusterState struct {
	views []replication.View
	// problem is why the cluster has no writable primary or a member is left out, with its reason.
	problem, problemReason string
	// errant are the members that hold writes the primary's history does not.
	errant []errantMember
}

// reconcileClusterAccount keeps the Secret of the replication account of a cluster, which has one.
func (r *Reconciler) reconcileClusterAccount(ctx context.Context, m *appsv1alpha1.MySQL) (resources.ClusterAccount, error) {
	if !m.Clustered() {
		return resources.ClusterAccount{}, nil
	}
	data, _, err := apply.GeneratedSecret(ctx, r.Client, m, m.ClusterAccountSecretName(),
		generatePassword,
		func(data map[string][]byte) *corev1ac.SecretApplyConfiguration {
			return resources.ClusterAccountSecret(m, data[appsv1alpha1.SecretKeyPassword])
		})
	if err != nil {
		return resources.ClusterAccount{}, fmt.Errorf("replication account of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	return resources.ClusterAccount{Password: data[appsv1alpha1.SecretKeyPassword]}, nil
}

// reconcileCluster reads every member of a cluster and moves it toward the recorded primary taking
// writes and every other member replicating from it: it chooses the first primary, fails over
// from a primary that stopped answering, and points members that came back at the primary. It
// returns when to read the members again.
func (r *Reconciler) reconcileCluster(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], seen *observed) (time.Duration, error) {
	m := p.Instance
	if !m.Clustered() || seen.clusterPassword == nil {
		return 0, nil
	}
	members := r.clusterMembers(m, memberSlots(m, seen.sts), seen.pods, string(seen.clusterPassword))
	observe := func() []replication.View {
		probe, cancel := context.WithTimeout(ctx, 2*memberDialTimeout)
		defer cancel()
		return replication.ObserveAll(probe, members)
	}
	state := &seen.cluster
	state.views = observe()
	fork, err := replication.ParsePosition(m.Status.Fork)
	if err != nil {
		return 0, fmt.Errorf("status.fork of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	proc := replication.Procedure{
		Members: int(m.MemberCount()), Durability: replication.Durability{AckTimeout: m.AckTimeout()},
		CatchUp: catchUpTimeout, OperatorUsers: []string{resources.ClusterUser}, Record: r.recordPrimary(p), Fork: fork,
	}
	epoch := m.Status.Epoch
	reopened, err := r.keepPrimary(ctx, p, proc, members, state, observe)
	if err != nil {
		return probeInterval, err
	}
	if err := r.handleSwitchover(ctx, p, proc, members, state); err != nil {
		return probeInterval, err
	}
	if err := r.leaveNodeGoingAway(ctx, p, proc, members, state, seen.pods); err != nil {
		return probeInterval, err
	}
	if err := r.refusePromote(ctx, p, state); err != nil {
		return probeInterval, err
	}
	if err := r.removeMembers(ctx, p, proc, members, state, seen.sts); err != nil {
		return probeInterval, err
	}
	var errant []errantMember
	if m.Status.Primary != "" {
		// The members are read again only after something changed their roles.
		if reopened || m.Status.Epoch != epoch {
			state.views = observe()
		}
		errant = r.pointMembersAtPrimary(ctx, m, members, state)
		state.errant = errant
	}
	return probeInterval, errors.Join(
		r.labelRoles(ctx, m, seen.pods, state.views),
		r.reconcileSeedPlan(ctx, m, seen.pods, state.views, errant),
		r.rollMembers(ctx, p, proc, members, state, seen.sts, seen.pods))
}

// clusterMembers are the members the StatefulSet's pods run, one per ordinal of slots; a member
// whose pod is missing is one that cannot be read.
func (r *Reconciler) clusterMembers(m *appsv1alpha1.MySQL, slots int32, pods []corev1.Pod, password string) []replication.Member {
	byName := map[string]*corev1.Pod{}
	for i := range pods {
		byName[pods[i].Name] = &pods[i]
	}
	keep := map[string]bool{}
	members := make([]replication.Member, 0, slots)
	for i := range slots {
		name := m.MemberName(i)
		pod, ok := byName[name]
		if !ok {
			pod = &corev1.Pod{}
			pod.Name, pod.Namespace = name, m.Namespace
		}
		keep[name] = true
		members = append(members, r.members.member(m, pod, password))
	}
	r.members.forget(m.Namespace, m.Name, keep)
	return members
}

func viewOf(views []replication.View, name string) (replication.View, bool) {
	for _, v := range views {
		if v.Name == name {
			return v, true
		}
	}
	return replication.View{}, false
}

// choosePrimary records and opens the first primary of a cluster once every member answers: the
// one that holds the most, which on a new cluster is the first, and on members kept from a
// deleted MySQL of the same name is the one with every transaction the others have.
func (r *Reconciler) choosePrimary(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState) error {
	var unread []string
	for _, v := range state.views {
		if v.Err != nil {
			unread = append(unread, fmt.Sprintf("%s (%v)", v.Name, describeMemberError(v.Err)))
		}
	}
	if len(unread) > 0 {
		state.problemReason = appsv1alpha1.ReasonNoPrimary
		state.problem = fmt.Sprintf("the first primary is chosen once every member answers; waiting for %v", unread)
		return nil
	}
	first := state.views[0]
	for _, v := range state.views[1:] {
		if v.Observation.Held().Seq(replication.Domain) > first.Observation.Held().Seq(replication.Domain) {
			first = v
		}
	}
	if err := proc.Record(ctx, first.Name, first.Observation.Held()); err != nil {
		return err
	}
	member := replication.Named(members, first.Name)
	openCtx, cancel := context.WithTimeout(ctx, catchUpTimeout+replication.StepTimeout)
	defer cancel()
	if err := replication.OpenWrites(openCtx, member.DB, first.Observation, proc.Durability, true, catchUpTimeout); err != nil {
		return fmt.Errorf("open %s to writes: %w", first.Name, err)
	}
	event.PrimaryChosen.Emit(r.Recorder, p.Instance, nil, "%s is the primary", first.Name)
	return nil
}

// recordPrimary writes a new primary, the next epoch and the fork position into the status, over
// the copy the pass read: a pass on a stale copy fails with a Conflict instead of choosing again.
func (r *Reconciler) recordPrimary(p *pass.Pass[*appsv1alpha1.MySQL]) replication.Record {
	return func(ctx context.Context, primary string, fork replication.Position) error {
		before := p.Instance.Status
		p.Instance.Status.Primary = primary
		p.Instance.Status.Epoch++
		p.Instance.Status.Fork = fork.String()
		if err := statuspatch.PatchOnce(ctx, r.Client, p.Original, p.Instance, func(m *appsv1alpha1.MySQL) any { return m.Status }); err != nil {
			p.Instance.Status = before
			return fmt.Errorf("record %s as primary: %w", primary, err)
		}
		// The pass's own status write goes over what is now stored.
		p.Original = p.Instance.DeepCopy()
		return nil
	}
}

// pointMembersAtPrimary makes every member that answers, other than the primary, replicate from
// it, unless it holds writes the primary's history does not: such a member is left as it is,
// named in the status and returned.
func (r *Reconciler) pointMembersAtPrimary(ctx context.Context, m *appsv1alpha1.MySQL, members []replication.Member, state *clusterState) []errantMember {
	primary := replication.Named(members, m.Status.Primary)
	fork, _ := replication.ParsePosition(m.Status.Fork)
	var errant []errantMember
	var described []string
	for _, v := range state.views {
		if v.Name == primary.Name || v.Err != nil {
			continue
		}
		o := v.Observation
		closed := o.ReadOnly || fenceFormerPrimary(ctx, replication.Named(members, v.Name), primary.Name)
		following := o.Replica != nil && o.Replica.SourceHost == primary.Source.Host
		if !following && !fork.Covers(o.Binlog) || o.WroteAfter(fork) {
			if !closed {
				// Not before it is closed: its server's stop would end the commits it holds
				// waiting in any order, which could tell a client a write is done.
				continue
			}
			errant = append(errant, errantMember{name: v.Name, held: o.Binlog})
			described = append(described, fmt.Sprintf("%s holds %s beyond the fork %s", v.Name, o.Binlog, fork))
			continue
		}
		if !closed {
			continue
		}
		stepCtx, cancel := context.WithTimeout(ctx, replication.StepTimeout)
		err := replication.Follow(stepCtx, replication.Named(members, v.Name).DB, o, primary.Source)
		cancel()
		if err != nil {
			log.FromContext(ctx).Info("could not point a member at the primary", "member", v.Name, "primary", primary.Name, "error", err.Error())
		}
	}
	if len(errant) > 0 && state.problem == "" {
		state.problemReason = appsv1alpha1.ReasonErrantMember
		state.problem = fmt.Sprintf("left out of replication and rebuilt from a copy, as they hold writes the primary %s never had: %v", primary.Name, described)
	}
	return errant
}

// fenceFormerPrimary closes a member that answers writable while another is primary (a former
// primary back from a hang, say): its clients' sessions are ended first, so that no transaction
// it holds waiting for an acknowledgement is reported done to its client, then it turns
// read-only. That waits for those transactions, which wait for an acknowledgement no replica
// sends any more: it tells whether the member is closed, and the sessions are ended again at
// every pass until it is, or until it is rebuilt.
func fenceFormerPrimary(ctx context.Context, member replication.Member, primary string) bool {
	stepCtx, cancel := context.WithTimeout(ctx, replication.StepTimeout)
	defer cancel()
	if err := replication.Fence(stepCtx, member.DB, resources.ClusterUser); err != nil {
		log.FromContext(ctx).Info("could not close a former primary to writes; its clients' sessions were ended", "member", member.Name, "error", err.Error())
		return false
	}
	log.FromContext(ctx).Info("closed a former primary to writes", "member", member.Name, "primary", primary)
	return true
}
