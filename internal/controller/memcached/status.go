package memcached

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/failure"
	resources "github.com/appkeeper/appkeeper/internal/resources/memcached"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// computeStatus derives the status of mc, whose spec is the one the pass applied (the last good
// revision's member fields while the spec's revision is rolled back), from the pass's rollout
// decision, from its StatefulSet as last observed (nil when it does not exist yet), from the pods
// that carry its selector labels (or podsErr, why they could not be read) and from the error of
// the current pass, if any. Pods that could not be read leave the members last reported in place
// and Available and Degraded Unknown.
func computeStatus(mc *appsv1alpha1.Memcached, d rollout.Decision, sts *appsv1.StatefulSet, pods []corev1.Pod, lost []conditions.PodProblem, podsErr, reconcileErr error) appsv1alpha1.MemcachedStatus {
	status := *mc.Status.DeepCopy()
	status.Rollout = d.Status
	status.ObservedGeneration = mc.Generation
	status.Selector = labels.SelectorFromSet(mc.SelectorLabels()).String()
	status.Size = 0
	if sts != nil {
		status.Size = sts.Status.Replicas
	}
	memberPods := members(mc, sts, pods)
	if podsErr == nil {
		var ready []string
		for i := range memberPods {
			if conditions.PodReady(&memberPods[i]) {
				ready = append(ready, memberPods[i].Name)
			}
		}
		status.ReadyReplicas = int32(len(ready))
		status.Nodes = ready[:min(len(ready), appsv1alpha1.MaxMemcachedSize)]
	}
	complete := rolloutComplete(mc, sts)
	if complete {
		status.Image = mc.Spec.Image
	}
	availableCondition := available(mc, sts, status.ReadyReplicas, conditions.StartingPods(mc.Status.Conditions, memberPods, mc.DesiredSize()))
	if podsErr != nil && sts != nil && mc.DesiredSize() > 0 {
		availableCondition = conditions.Condition{Type: appsv1alpha1.ConditionAvailable, Status: metav1.ConditionUnknown,
			Reason: appsv1alpha1.ReasonReadFailed, Message: "the members could not be read: " + podsErr.Error()}
	}
	progressingCondition := progressing(mc, sts, complete)
	if sts == nil && reconcileErr != nil {
		// The pass failed before it saw the StatefulSet: whether it exists, and how it runs, is unknown.
		unobserved := "the StatefulSet could not be observed: " + reconcileErr.Error()
		availableCondition = conditions.Condition{Type: appsv1alpha1.ConditionAvailable, Status: metav1.ConditionUnknown,
			Reason: appsv1alpha1.ReasonReadFailed, Message: unobserved}
		progressingCondition = conditions.Condition{Type: appsv1alpha1.ConditionProgressing, Status: metav1.ConditionUnknown,
			Reason: appsv1alpha1.ReasonReadFailed, Message: unobserved}
	}
	conditions.SetHealthConditions(&status.Conditions, mc.Generation,
		availableCondition,
		d.Progressing(progressingCondition),
		d.Degraded(degraded(memberPods, lost, podsErr, reconcileErr), reconcileErr))
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

// available is the Available condition of a Memcached with ready members. The StatefulSet
// replaces members one at a time, so during a rollout one member may be down: the cache stays
// Available while size − 1 members serve. Members a scale up adds (starting) are not counted as
// missing while the members that served still do. Otherwise every member must serve.
func available(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, ready, starting int32) conditions.Condition {
	want := mc.DesiredSize()
	c := conditions.Condition{Type: appsv1alpha1.ConditionAvailable}
	minimum := want
	if sts != nil && want > 1 && (!templateCurrent(mc, sts) || sts.Status.CurrentRevision != sts.Status.UpdateRevision) {
		minimum = want - 1
	}
	switch {
	case want == 0:
		c.Reason, c.Message = appsv1alpha1.ReasonScaledToZero, "spec.size is 0: no member runs, so the cache serves nothing"
	case sts == nil:
		c.Reason, c.Message = appsv1alpha1.ReasonCreating, "the StatefulSet is being created"
	case conditions.ServesMinimum(ready, starting, minimum):
		c.Status, c.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonAsExpected
		c.Message = fmt.Sprintf("%d of %d members ready", ready, want)
	default:
		c.Reason = appsv1alpha1.ReasonReplicasNotReady
		c.Message = fmt.Sprintf("%d of %d members ready, %d needed", ready, want, minimum)
	}
	return c
}

func progressing(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, complete bool) conditions.Condition {
	c := conditions.Condition{Type: appsv1alpha1.ConditionProgressing}
	want := mc.DesiredSize()
	switch {
	case complete:
		c.Reason = appsv1alpha1.ReasonRolloutComplete
		c.Message = fmt.Sprintf("%d members run %s", want, mc.Spec.Image)
	case sts == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonCreating, "the StatefulSet is being created"
	case !templateCurrent(mc, sts) || sts.Status.UpdatedReplicas < sts.Status.Replicas ||
		sts.Status.CurrentRevision != sts.Status.UpdateRevision:
		c.Status, c.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonRollingOut
		c.Message = fmt.Sprintf("rolling out %s: %d of %d members updated", mc.Spec.Image, sts.Status.UpdatedReplicas, want)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonScaling
		c.Message = fmt.Sprintf("scaling to %d members: %d available", want, sts.Status.AvailableReplicas)
	}
	return c
}

// degraded is True when the pass failed or a member cannot run without help or is on a lost node
// (PodsDegraded), and Unknown when the members could not be read.
func degraded(memberPods []corev1.Pod, lost []conditions.PodProblem, podsErr, reconcileErr error) conditions.Condition {
	if reconcileErr != nil {
		return conditions.Condition{Type: appsv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue,
			Reason: failure.Reason(reconcileErr), Message: reconcileErr.Error()}
	}
	return conditions.PodsDegraded(memberPods, lost, podsErr)
}
