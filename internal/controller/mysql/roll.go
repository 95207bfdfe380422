package mysql

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// rollMembers replaces a cluster's members of an older revision than the StatefulSet's, one at a
// time and only while the cluster is whole: the replicas first, highest ordinal first, then the
// primary, once it has handed its role to a replica of the new revision. A change of image or
// config so costs one switchover, never a failover.
func (r *Reconciler) rollMembers(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState, sts *appsv1.StatefulSet, pods []corev1.Pod) error {
	m := p.Instance
	if sts == nil || sts.Status.UpdateRevision == "" || sts.Status.ObservedGeneration < sts.Generation ||
		sts.Spec.Replicas == nil || int32(len(pods)) < *sts.Spec.Replicas {
		return nil
	}
	var outdated []*corev1.Pod
	for i := range pods {
		pod := &pods[i]
		switch {
		case !pod.DeletionTimestamp.IsZero() || !conditions.PodReady(pod):
			// A member is going, starting, or cannot start (a wedged one is replaced apart from
			// the roll): the roll waits until every member serves.
			return nil
		case pod.Labels[appsv1.ControllerRevisionHashLabelKey] != "" && pod.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision:
			outdated = append(outdated, pod)
		}
	}
	if len(outdated) == 0 || !primaryOpen(m, state.views) || state.problem != "" {
		return nil
	}
	slices.SortFunc(outdated, func(a, b *corev1.Pod) int { return cmp.Compare(ordinal(b.Name), ordinal(a.Name)) })
	for _, pod := range outdated {
		if pod.Name == m.Status.Primary {
			continue
		}
		if _, err := apply.DeleteExactly(ctx, r.Client, pod); err != nil {
			return fmt.Errorf("replace member %s of MySQL %s/%s with the new revision: %w", pod.Name, m.Namespace, m.Name, err)
		}
		log.FromContext(ctx).Info("replacing a replica with the new revision", "member", pod.Name, "revision", sts.Status.UpdateRevision)
		return nil
	}
	best := bestSwitchable(m, state.views, func(string) bool { return true })
	if best == nil {
		log.FromContext(ctx).Info("no replica of the new revision is in step with the primary to take over before the primary's replacement")
		return nil
	}
	from := m.Status.Primary
	if err := r.switchTo(ctx, p, proc, members, best.Name); err != nil {
		return fmt.Errorf("switch over from %s before its replacement with the new revision: %w", from, err)
	}
	event.SwitchedOver.Emit(r.Recorder, m, nil, "%s took over from %s, which is replaced next with the new revision", best.Name, from)
	return nil
}

// ordinal is the ordinal that ends a member's name.
func ordinal(member string) int {
	n, _ := strconv.Atoi(member[strings.LastIndex(member, "-")+1:])
	return n
}
