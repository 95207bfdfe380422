package memcached

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/reconcile"
	resources "github.com/appkeeper/appkeeper/internal/resources/memcached"
)

// computeStatus derives the status of mc from its StatefulSet as last observed (nil when it does
// not exist yet), from the pods that carry its selector labels and from the error of the current
// pass, if any.
func computeStatus(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, pods []corev1.Pod, reconcileErr error) appsv1alpha1.MemcachedStatus {
	status := *mc.Status.DeepCopy()
	status.ObservedGeneration = mc.Generation
	status.Selector = labels.SelectorFromSet(mc.SelectorLabels()).String()
	status.Size = 0
	if sts != nil {
		status.Size = sts.Status.Replicas
	}
	memberPods := members(mc, sts, pods)
	var ready []string
	for i := range memberPods {
		if podReady(&memberPods[i]) {
			ready = append(ready, memberPods[i].Name)
		}
	}
	status.ReadyReplicas = int32(len(ready))
	status.Nodes = ready[:min(len(ready), appsv1alpha1.MaxMemcachedSize)]
	complete := rolloutComplete(mc, sts)
	reconcile.SetConditions(&status.Conditions, mc.Generation,
		available(mc, sts, len(ready)),
		progressing(mc, sts, complete),
		degraded(memberPods, reconcileErr))
	return status
}

// members are the pods the StatefulSet controls that are not being deleted, in ordinal order.
// Owner and name are both checked, so that a pod someone made with the same labels never counts.
func members(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, pods []corev1.Pod) []corev1.Pod {
	if sts == nil {
		return nil
	}
	var out []corev1.Pod
	for _, pod := range pods {
		owner := metav1.GetControllerOf(&pod)
		if owner == nil || owner.Kind != "StatefulSet" || owner.UID != sts.UID || pod.DeletionTimestamp != nil {
			continue
		}
		if _, ok := ordinal(mc, pod.Name); ok {
			out = append(out, pod)
		}
	}
	// Ordinal order, not name order: a person reads cache-2 before cache-10.
	slices.SortFunc(out, func(a, b corev1.Pod) int {
		i, _ := ordinal(mc, a.Name)
		j, _ := ordinal(mc, b.Name)
		return i - j
	})
	return out
}

// ordinal is the member number in a pod name <ChildName>-<ordinal>.
func ordinal(mc *appsv1alpha1.Memcached, name string) (int, bool) {
	suffix, ok := strings.CutPrefix(name, mc.ChildName()+"-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(suffix)
	return n, err == nil && n >= 0
}

// memberChanged tells whether an update of a pod can change the status: it reads of a pod only its
// labels, owner, deletion, readiness and problem. A pod's other updates start no reconcile.
func memberChanged(old, updated *corev1.Pod) bool {
	return podReady(old) != podReady(updated) || podProblem(old) != podProblem(updated) ||
		!maps.Equal(old.Labels, updated.Labels) ||
		controllerUID(old) != controllerUID(updated) ||
		old.DeletionTimestamp.IsZero() != updated.DeletionTimestamp.IsZero()
}

func controllerUID(pod *corev1.Pod) types.UID {
	if owner := metav1.GetControllerOf(pod); owner != nil {
		return owner.UID
	}
	return ""
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// templateCurrent is true when the StatefulSet's pod template runs the image and the flags of the
// current spec; an apply in this pass changes it only after the status is computed.
func templateCurrent(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet) bool {
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == resources.ContainerName {
			return c.Image == mc.Spec.Image && slices.Equal(c.Args, resources.Args(mc))
		}
	}
	return false
}

// rolloutComplete is true when the StatefulSet runs the current spec on exactly the desired number
// of members, all of them available.
func rolloutComplete(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet) bool {
	if sts == nil || sts.Status.ObservedGeneration < sts.Generation || !templateCurrent(mc, sts) {
		return false
	}
	want := mc.DesiredSize()
	s := sts.Status
	return sts.Spec.Replicas != nil && *sts.Spec.Replicas == want &&
		s.Replicas == want && s.UpdatedReplicas == want && s.AvailableReplicas == want &&
		s.CurrentRevision == s.UpdateRevision
}

func available(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, ready int) reconcile.Condition {
	want := int(mc.DesiredSize())
	c := reconcile.Condition{Type: appsv1alpha1.ConditionAvailable}
	switch {
	case want == 0:
		c.Reason, c.Message = appsv1alpha1.ReasonScaledToZero, "spec.size is 0: no member runs, so the cache serves nothing"
	case sts == nil:
		c.Reason, c.Message = appsv1alpha1.ReasonCreating, "the StatefulSet is being created"
	case ready >= want:
		c.Status, c.Reason = true, appsv1alpha1.ReasonAsExpected
		c.Message = fmt.Sprintf("%d of %d members ready", ready, want)
	default:
		c.Reason = appsv1alpha1.ReasonReplicasNotReady
		c.Message = fmt.Sprintf("%d of %d members ready", ready, want)
	}
	return c
}

func progressing(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, complete bool) reconcile.Condition {
	c := reconcile.Condition{Type: appsv1alpha1.ConditionProgressing}
	want := mc.DesiredSize()
	switch {
	case complete:
		c.Reason = appsv1alpha1.ReasonRolloutComplete
		c.Message = fmt.Sprintf("%d members run %s", want, mc.Spec.Image)
	case sts == nil:
		c.Status, c.Reason, c.Message = true, appsv1alpha1.ReasonCreating, "the StatefulSet is being created"
	case !templateCurrent(mc, sts) || sts.Status.UpdatedReplicas < sts.Status.Replicas ||
		sts.Status.CurrentRevision != sts.Status.UpdateRevision:
		c.Status, c.Reason = true, appsv1alpha1.ReasonRollingOut
		c.Message = fmt.Sprintf("rolling out %s: %d of %d members updated", mc.Spec.Image, sts.Status.UpdatedReplicas, want)
	default:
		c.Status, c.Reason = true, appsv1alpha1.ReasonScaling
		c.Message = fmt.Sprintf("scaling to %d members: %d available", want, sts.Status.AvailableReplicas)
	}
	return c
}

// degraded is True when the pass failed or a member cannot start without help: it cannot be
// scheduled, or its container cannot be pulled or keeps crashing.
func degraded(memberPods []corev1.Pod, reconcileErr error) reconcile.Condition {
	c := reconcile.Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected}
	if reconcileErr != nil {
		c.Status, c.Reason, c.Message = true, reconcile.ErrorReason(reconcileErr), reconcileErr.Error()
		return c
	}
	var failing []string
	for i := range memberPods {
		if problem := podProblem(&memberPods[i]); problem != "" {
			failing = append(failing, memberPods[i].Name+": "+problem)
		}
	}
	if len(failing) > 0 {
		c.Status, c.Reason = true, appsv1alpha1.ReasonReplicaFailure
		c.Message = fmt.Sprintf("%d members cannot run; %s", len(failing), failing[0])
	}
	return c
}

// stuckReasons are the waiting reasons of a container that will not start by waiting longer.
var stuckReasons = []string{"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError"}

// podProblem describes why a pod cannot run without help, or is empty.
func podProblem(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return "unschedulable: " + c.Message
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && slices.Contains(stuckReasons, w.Reason) {
			return fmt.Sprintf("container %s: %s: %s", cs.Name, w.Reason, w.Message)
		}
	}
	return ""
}
