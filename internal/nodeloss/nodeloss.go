// Package nodeloss frees the pods a lost node holds. A node whose kubelet stopped reporting (a
// power cut, a crash) keeps its pods in the API server: they turn unready, and a deletion never
// ends, since only the kubelet confirms it. A pod with a fixed name (a StatefulSet's, a PodSet's)
// then holds its name, and no replacement starts anywhere. For pods that hold no data of their
// own, the operator deletes such a pod at once, with no grace period, once its node has been lost
// for a while, and its controller starts it again on a node that runs.
package nodeloss

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
)

// +kubebuilder:rbac:groups=core,resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=delete

// Grace is how long a node must have been lost before its pods are freed: the node lifecycle
// controller says a node is lost (Ready Unknown) only once its kubelet has been silent for its
// grace period (50 s by default); this much more rides out a kubelet's restart or a short
// partition from the API server.
const Grace = 30 * time.Second

// lostSince tells since when node has been lost: its Ready condition Unknown, which the node
// lifecycle controller sets when the kubelet stops reporting. A kubelet that reports its node not
// ready still runs, and still ends its pods' deletions.
func lostSince(node *corev1.Node) (time.Time, bool) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastTransitionTime.Time, c.Status == corev1.ConditionUnknown
		}
	}
	return time.Time{}, false
}

// Lost tells whether node is lost: its kubelet stopped reporting.
func Lost(node *corev1.Node) bool {
	_, lost := lostSince(node)
	return lost
}

// Freed is a pod deleted from a lost node.
type Freed struct {
	Pod, Node string
	// Lost is how long the node had been lost.
	Lost time.Duration
}

func (f Freed) String() string {
	return fmt.Sprintf("%s, on node %s, lost for %s", f.Pod, f.Node, f.Lost.Round(time.Second))
}

// lostPod is a pod whose node has been lost since since.
type lostPod struct {
	pod   *corev1.Pod
	node  string
	since time.Time
}

// onLostNodes tells which of pods are on a lost node, in the order of pods. Nodes are read from
// the cache; a pod whose node is gone is on no node.
func onLostNodes(ctx context.Context, c client.Client, pods []corev1.Pod) ([]lostPod, error) {
	var lost []lostPod
	for i := range pods {
		pod := &pods[i]
		if pod.Spec.NodeName == "" {
			continue
		}
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("node of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if since, isLost := lostSince(node); isLost {
			lost = append(lost, lostPod{pod: pod, node: node.Name, since: since})
		}
	}
	return lost, nil
}

// Problems tells, for each pod of pods on a lost node, that the instance is short of it until the
// pod starts again elsewhere: the node's pods neither serve nor end. The message holds the time the
// node was lost, not for how long, so that the same loss always reads the same. The error is
// readErr, the one the pods were listed with, joined with any met reading their nodes.
func Problems(ctx context.Context, c client.Client, pods []corev1.Pod, readErr error) ([]conditions.PodProblem, error) {
	lost, err := onLostNodes(ctx, c, pods)
	err = errors.Join(readErr, err)
	problems := make([]conditions.PodProblem, 0, len(lost))
	for _, l := range lost {
		problems = append(problems, conditions.PodProblem{Reason: appsv1alpha1.ReasonNodeLost,
			Message: fmt.Sprintf("pod %s: its node %s has not reported since %s", l.pod.Name, l.node, l.since.UTC().Format(time.RFC3339))})
	}
	return problems, err
}

// free deletes, with no grace period, every pod of pods whose node has been lost for Grace, and
// tells which, and when to look again for a node lost for less. A pod recreated meanwhile under
// the same name is not touched.
func free(ctx context.Context, c client.Client, pods []corev1.Pod, now time.Time) (freed []Freed, recheck time.Duration, err error) {
	lost, err := onLostNodes(ctx, c, pods)
	if err != nil {
		return nil, 0, err
	}
	for _, l := range lost {
		if wait := l.since.Add(Grace).Sub(now); wait > 0 {
			recheck = pass.Earliest(recheck, wait)
			continue
		}
		deleted, err := apply.DeleteExactly(ctx, c, l.pod, client.GracePeriodSeconds(0))
		if err != nil {
			return freed, 0, fmt.Errorf("delete pod %s/%s from lost node %s: %w", l.pod.Namespace, l.pod.Name, l.node, err)
		}
		if deleted {
			freed = append(freed, Freed{Pod: l.pod.Name, Node: l.node, Lost: now.Sub(l.since)})
		}
	}
	return freed, recheck, nil
}

// report records a Warning Event on owner and a log line for each pod freed.
func report(ctx context.Context, recorder events.EventRecorder, owner runtime.Object, freed []Freed) {
	for _, f := range freed {
		log.FromContext(ctx).Info("deleted a pod from a lost node", "pod", f.Pod, "node", f.Node, "lost", f.Lost.Round(time.Second).String())
		event.LostNodePodDeleted.Emit(recorder, owner, nil, "deleted pod %s: it starts again on a node that runs", f)
	}
}

// FreeFrom frees the pods of owner that lost nodes hold, as free does, reports them, and returns
// the pods left, and when to look again.
func FreeFrom(ctx context.Context, c client.Client, recorder events.EventRecorder, owner runtime.Object, pods []corev1.Pod) ([]corev1.Pod, time.Duration, error) {
	freed, recheck, err := free(ctx, c, pods, time.Now())
	report(ctx, recorder, owner, freed)
	if len(freed) == 0 {
		return pods, recheck, err
	}
	gone := map[string]bool{}
	for _, f := range freed {
		gone[f.Pod] = true
	}
	left := make([]corev1.Pod, 0, len(pods)-len(freed))
	for _, pod := range pods {
		if !gone[pod.Name] {
			left = append(left, pod)
		}
	}
	return left, recheck, err
}
