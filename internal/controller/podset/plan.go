package podset

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	resources "github.com/appkeeper/appkeeper/internal/resources/podset"
)

// why a pod is deleted; each has its own event.
type why int

const (
	// surplus: more pods than spec.replicas (a scale down, or a pod the PodSet did not name).
	surplus why = iota
	// stale: the pod was built from an older template.
	stale
	// finished: the pod failed or succeeded and will not run again.
	finished
)

type deletion struct {
	pod *corev1.Pod
	why why
}

// member is a running pod of the PodSet, with the ordinal its name carries.
type member struct {
	pod     *corev1.Pod
	ordinal int
}

// plan is what one reconcile does to the pods.
type plan struct {
	// create holds the ordinals of the pods to create, lowest first.
	create []int
	// delete holds the pods to delete.
	delete []deletion
	// taken holds the names of wanted pods that exist but are not controlled by the PodSet.
	taken []string
}

// planPods decides what to create and delete, given the pods of ps as observed (possibly by a cache
// that lags behind) and the hash of ps's current template.
//
// Pods are only ever created with an ordinal below spec.replicas, at the lowest ordinals free in the
// observed pods. Names are unique, so at most spec.replicas pods can hold those ordinals, and a pass
// that does not yet see the pods an earlier pass created picks their names again and gets
// AlreadyExists instead of an extra pod.
//
// Pods that ps does not control are never deleted or counted; their names are only kept free of
// new pods.
func planPods(ps *appsv1alpha1.PodSet, hash string, pods []corev1.Pod) plan {
	var p plan
	want := int(ps.DesiredReplicas())
	occupied := map[int]*corev1.Pod{}
	var active []member
	for i := range pods {
		pod := &pods[i]
		ordinal, named := resources.Ordinal(ps, pod.Name)
		if named {
			// Even a terminating pod holds its name until it is gone.
			occupied[ordinal] = pod
		}
		switch {
		case !metav1.IsControlledBy(pod, ps):
		case pod.DeletionTimestamp != nil:
		case isFinished(pod):
			p.delete = append(p.delete, deletion{pod, finished})
		case !named:
			p.delete = append(p.delete, deletion{pod, surplus})
		default:
			active = append(active, member{pod, ordinal})
		}
	}

	slices.SortFunc(active, removalOrder(hash))
	if n := len(active) - want; n > 0 {
		for _, m := range active[:n] {
			p.delete = append(p.delete, deletion{m.pod, surplus})
		}
		active = active[n:]
	}

	missing := want - len(active)
	for ordinal := 0; ordinal < want && len(p.create) < missing; ordinal++ {
		switch pod := occupied[ordinal]; {
		case pod == nil:
			p.create = append(p.create, ordinal)
		case !metav1.IsControlledBy(pod, ps):
			p.taken = append(p.taken, pod.Name)
		}
	}

	p.delete = append(p.delete, staleToReplace(active, hash, want, int(ps.MaxUnavailableReplicas()))...)
	return p
}

// replacesStale is true when the plan deletes a pod of an older template to roll out the current one.
func (p plan) replacesStale() bool {
	for _, d := range p.delete {
		if d.why == stale {
			return true
		}
	}
	return false
}

// staleToReplace picks the pods of an older template to delete now, among the pods kept, which are
// sorted by removalOrder. Missing and not-ready pods use up the budget of maxUnavailable first; a
// stale pod that is not ready costs nothing to replace, since it serves nobody.
func staleToReplace(kept []member, hash string, want, maxUnavailable int) []deletion {
	ready := 0
	for _, m := range kept {
		if conditions.PodReady(m.pod) {
			ready++
		}
	}
	budget := maxUnavailable - (want - ready)
	var out []deletion
	for _, m := range kept {
		if isCurrent(m.pod, hash) {
			continue
		}
		if conditions.PodReady(m.pod) {
			if budget <= 0 {
				continue
			}
			budget--
		}
		out = append(out, deletion{m.pod, stale})
	}
	return out
}

// removalOrder sorts the pods to remove first to the front: not ready before ready, then an old
// template before the current one, then the highest ordinal, the newest name, first.
func removalOrder(hash string) func(a, b member) int {
	rank := func(pod *corev1.Pod) int {
		r := 0
		if conditions.PodReady(pod) {
			r += 2
		}
		if isCurrent(pod, hash) {
			r++
		}
		return r
	}
	return func(a, b member) int {
		if d := rank(a.pod) - rank(b.pod); d != 0 {
			return d
		}
		return b.ordinal - a.ordinal
	}
}

func isCurrent(pod *corev1.Pod, hash string) bool {
	return pod.Annotations[appsv1alpha1.AnnotationTemplateHash] == hash
}

func isFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}
