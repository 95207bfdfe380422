package mysql

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/disruption"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/nodeloss"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// +kubebuilder:rbac:groups=core,resources=nodes,verbs=get;list;watch

// budgets are a cluster's PodDisruptionBudgets. The primary's eviction is refused while it is
// ready, so that a drain of its node waits until the operator has switched over to a replica on
// another node; the other members go one at a time. The two never select the same pod: the
// eviction API refuses a pod that two budgets select. A single server has none.
func budgets(m *appsv1alpha1.MySQL) []disruption.Budget {
	if !m.Clustered() {
		return nil
	}
	primary := map[string]string{appsv1alpha1.LabelRole: appsv1alpha1.RoleLabelPrimary}
	for k, v := range m.SelectorLabels() {
		primary[k] = v
	}
	return []disruption.Budget{
		{Name: m.PrimaryBudgetName(), Selector: metav1.LabelSelector{MatchLabels: primary}, MinAvailable: ptr.To[int32](1)},
		{Name: m.ChildName(), MinAvailable: ptr.To(m.MemberCount() - 2), Selector: metav1.LabelSelector{
			MatchLabels: m.SelectorLabels(),
			MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: appsv1alpha1.LabelRole, Operator: metav1.LabelSelectorOpNotIn, Values: []string{appsv1alpha1.RoleLabelPrimary},
			}},
		}},
	}
}

// reconcileBudgets keeps the budgets m asks for and deletes those it no longer does.
func (r *Reconciler) reconcileBudgets(ctx context.Context, m *appsv1alpha1.MySQL, created *pass.Creations) error {
	return disruption.KeepAll(ctx, r.Client, m, budgets(m), []string{m.PrimaryBudgetName(), m.ChildName()}, created)
}

// leaveNodeGoingAway switches over from a primary whose node is cordoned, as a drain does first, to
// the replica drainTarget chooses, so that the drain's eviction of the old primary, held by its
// budget until then, finds a replica. With no such replica the primary stays, and the drain waits.
// A primary on a lost node that still answers the operator (the node's kubelet alone is cut off
// from the API server) is left the same way: its pod is marked unready, so the client Service no
// longer sends it anything, and a failover would never come, since the primary answers.
func (r *Reconciler) leaveNodeGoingAway(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], proc replication.Procedure,
	members []replication.Member, state *clusterState, pods []corev1.Pod) error {
	m := p.Instance
	if !primaryOpen(m, state.views) || state.problem != "" {
		return nil
	}
	nodes := nodesOf(pods)
	from := nodes[m.Status.Primary]
	goingAway, lost := map[string]bool{}, map[string]bool{}
	for _, node := range nodes {
		cordoned, isLost, err := r.leaving(ctx, node)
		if err != nil {
			return err
		}
		goingAway[node], lost[node] = cordoned || isLost, isLost
	}
	if !goingAway[from] {
		r.drains.over(m)
		return nil
	}
	why := "is cordoned"
	if lost[from] {
		why = "is lost (its kubelet does not report)"
	}
	to := drainTarget(m, state.views, nodes, goingAway)
	if to == "" {
		r.drains.warnOnce(m, from, func() {
			event.DrainWaiting.Emit(r.Recorder, m, nil, "node %s of the primary %s %s, and no replica in step runs on a node that takes pods: "+
				"the primary stays, and a drain of its node waits", from, m.Status.Primary, why)
		})
		return nil
	}
	r.drains.over(m)
	began, old := time.Now(), m.Status.Primary
	if err := r.switchTo(ctx, p, proc, members, to); err != nil {
		return fmt.Errorf("switch over from %s, whose node %s %s: %w", old, from, why, err)
	}
	message := fmt.Sprintf("%s took over from %s, whose node %s %s; writes were closed for %s", to, old, from, why,
		time.Since(began).Round(time.Millisecond))
	m.Status.LastSwitchover = &appsv1alpha1.SwitchoverStatus{Requested: to, From: old, To: to,
		Result: appsv1alpha1.SwitchoverDone, Message: message, Time: metav1.Now()}
	event.SwitchedOver.Emit(r.Recorder, m, nil, "%s", message)
	log.FromContext(ctx).Info("switchover from a node that takes no pods", "from", old, "to", to, "node", from, "lost", lost[from])
	return nil
}

// drainTarget is the replica in step that holds the most among those on a node other than the
// primary's that takes pods, or empty when there is none. nodes maps each member to its node, and
// goingAway says which nodes take no new pods (cordoned) or are lost.
func drainTarget(m *appsv1alpha1.MySQL, views []replication.View, nodes map[string]string, goingAway map[string]bool) string {
	from := nodes[m.Status.Primary]
	best := bestSwitchable(m, views, func(member string) bool {
		node := nodes[member]
		return node != "" && node != from && !goingAway[node]
	})
	if best == nil {
		return ""
	}
	return best.Name
}

// nodesOf maps each pod's name to its node.
func nodesOf(pods []corev1.Pod) map[string]string {
	nodes := make(map[string]string, len(pods))
	for _, pod := range pods {
		nodes[pod.Name] = pod.Spec.NodeName
	}
	return nodes
}

// leaving tells whether the node named name takes no new pods, as kubectl cordon and drain leave
// it, and whether it is lost. A pod not yet on a node is on neither.
func (r *Reconciler) leaving(ctx context.Context, name string) (cordoned, lost bool, err error) {
	if name == "" {
		return false, false, nil
	}
	node := &corev1.Node{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		return false, false, client.IgnoreNotFound(err)
	}
	return node.Spec.Unschedulable, nodeloss.Lost(node), nil
}

// waitingDrains remembers, by cluster, the cordoned node said to hold a drain waiting for a
// replica, so that the Event is recorded once a drain and not once a pass; a drain is over when
// the primary's node takes pods again or the primary leaves it.
type waitingDrains struct {
	mu   sync.Mutex
	said map[types.NamespacedName]string
}

// warnOnce calls warn unless it was called for m and node the last time.
func (w *waitingDrains) warnOnce(m *appsv1alpha1.MySQL, node string, warn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.said == nil {
		w.said = map[types.NamespacedName]string{}
	}
	key := types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
	if w.said[key] == node {
		return
	}
	w.said[key] = node
	warn()
}

// over forgets the drain m's primary waited for, so that the next one is told of again.
func (w *waitingDrains) over(m *appsv1alpha1.MySQL) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.said, types.NamespacedName{Namespace: m.Namespace, Name: m.Name})
}
