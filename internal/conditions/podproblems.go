package conditions

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// PodProblem is why a pod cannot run without help: the reason the scheduler or the kubelet gives,
// verbatim, and a message naming the pod and, for a container, the container.
type PodProblem struct {
	Reason  string
	Message string
}

// stuckWaitingReasons are the waiting reasons of a container that waiting longer will not start:
// the kubelet retries them with a back-off, but each needs a change of spec, image or cluster.
var stuckWaitingReasons = []string{
	appsv1alpha1.ReasonCrashLoopBackOff,
	appsv1alpha1.ReasonImagePullBackOff,
	appsv1alpha1.ReasonErrImagePull,
	appsv1alpha1.ReasonErrImageNeverPull,
	appsv1alpha1.ReasonInvalidImageName,
	appsv1alpha1.ReasonCreateContainerConfigError,
	appsv1alpha1.ReasonCreateContainerError,
	appsv1alpha1.ReasonRunContainerError,
}

// claimWaits are the scheduler's words for a pod whose claims are not bound yet, or bound to a
// volume it has not seen yet: every new claim passes through them.
var claimWaits = []string{"pod has unbound immediate PersistentVolumeClaims", "bound to non-existent persistentvolume"}

// FindPodProblem says what keeps pod from running, or returns nil: it cannot be scheduled, or one
// of its init or app containers waits for a reason that time alone will not clear. A pod being
// deleted has no problem: it is going anyway. Neither has a pod that waits for its claims
// (claimWaits): a claim that stays unbound or loses its volume is the claim's problem, told by its
// phase, which the kinds that own claims report.
func FindPodProblem(pod *corev1.Pod) *PodProblem {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
			!slices.ContainsFunc(claimWaits, func(wait string) bool { return strings.Contains(c.Message, wait) }) {
			return &PodProblem{Reason: appsv1alpha1.ReasonUnschedulable, Message: fmt.Sprintf("pod %s: %s: %s", pod.Name, c.Reason, c.Message)}
		}
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if w := cs.State.Waiting; w != nil && slices.Contains(stuckWaitingReasons, w.Reason) {
				return containerProblem(pod, cs, w)
			}
		}
	}
	return nil
}

// containerProblem is the problem of a container stuck waiting: the cause of a crash loop or of a
// missing reference where one can be told, and otherwise the kubelet's reason and message.
func containerProblem(pod *corev1.Pod, cs corev1.ContainerStatus, w *corev1.ContainerStateWaiting) *PodProblem {
	reason, evidence := w.Reason, ""
	switch w.Reason {
	case appsv1alpha1.ReasonCrashLoopBackOff:
		if cause := crashCause(pod, cs); cause != nil {
			return cause
		}
		evidence = lastExit(cs.LastTerminationState.Terminated)
	case appsv1alpha1.ReasonCreateContainerConfigError:
		reason = cmp.Or(missingReference(w.Message), reason)
	}
	return &PodProblem{Reason: reason, Message: fmt.Sprintf("pod %s: container %s: %s: %s%s", pod.Name, cs.Name, reason, w.Message, evidence)}
}

// PodsDegraded is the Degraded condition the pods alone call for: True with the first failing
// pod's own reason (by name, so that the same pods give the same condition), then with the first
// of lost (pods whose node is lost, which the pods themselves cannot tell), Unknown when the pods
// could not be read, and False otherwise.
func PodsDegraded(pods []corev1.Pod, lost []PodProblem, readErr error) Condition {
	c := Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected}
	if readErr != nil {
		c.Status, c.Reason = metav1.ConditionUnknown, appsv1alpha1.ReasonReadFailed
		c.Message = "the pods could not be read: " + readErr.Error()
		return c
	}
	var problems []PodProblem
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	for i := range sorted {
		if p := FindPodProblem(&sorted[i]); p != nil {
			problems = append(problems, *p)
		}
	}
	problems = append(problems, lost...)
	if len(problems) == 0 {
		return c
	}
	c.Status, c.Reason, c.Message = metav1.ConditionTrue, problems[0].Reason, problems[0].Message
	if len(problems) > 1 {
		c.Message += fmt.Sprintf(" (and %d more pods failing)", len(problems)-1)
	}
	return c
}

// PodReady tells whether the pod's Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodStatusChanged tells whether an update of a pod can change what the controllers make of it:
// readiness, a problem appearing, going or changing (a crash loop's message gives the restart
// count, so each restart counts), phase, deletion, labels, annotations (a PodSet's template hash)
// and controller. The kubelet's other updates (a probe's timestamps, an IP) start no reconcile.
func PodStatusChanged(old, updated *corev1.Pod) bool {
	return PodReady(old) != PodReady(updated) ||
		!equalProblems(FindPodProblem(old), FindPodProblem(updated)) ||
		old.Status.Phase != updated.Status.Phase ||
		old.DeletionTimestamp.IsZero() != updated.DeletionTimestamp.IsZero() ||
		!maps.Equal(old.Labels, updated.Labels) ||
		!maps.Equal(old.Annotations, updated.Annotations) ||
		ControllerUID(old) != ControllerUID(updated)
}

func equalProblems(a, b *PodProblem) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ControllerUID is the UID of obj's controller, or empty when it has none.
func ControllerUID(obj metav1.Object) string {
	if owner := metav1.GetControllerOf(obj); owner != nil {
		return string(owner.UID)
	}
	return ""
}

// PodStatusChangedPredicate passes every creation and deletion of a pod and only the updates
// PodStatusChanged keeps, so that a pod's routine status updates cost no reconcile.
var PodStatusChangedPredicate = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, oldIsPod := e.ObjectOld.(*corev1.Pod)
	updated, updatedIsPod := e.ObjectNew.(*corev1.Pod)
	return !oldIsPod || !updatedIsPod || PodStatusChanged(old, updated)
}}
