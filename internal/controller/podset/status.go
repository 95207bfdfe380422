package podset

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/failure"
	resources "github.com/appkeeper/appkeeper/internal/resources/podset"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// counts are the pods of a PodSet that exist and are not terminating.
type counts struct {
	replicas, ready, updated int32
}

// computeStatus derives the status of ps, whose template is the one the pass built its pods from
// (the last good revision's while the spec's is rolled back), from the pass's rollout decision,
// from its pods as they stand after this pass (observed, minus those it deleted, plus those it
// created), whose current template hash is hash, and from the error of the pass, if any. When the
// pods could not be read (podsErr), the pods last reported stay and every condition is Unknown: a
// failed read is no evidence that the pods are gone.
func computeStatus(ps *appsv1alpha1.PodSet, hash string, d rollout.Decision, pods []corev1.Pod, lost []conditions.PodProblem, podsErr, reconcileErr error) appsv1alpha1.PodSetStatus {
	status := *ps.Status.DeepCopy()
	status.Rollout = d.Status
	status.ObservedGeneration = ps.Generation
	status.Selector = labels.SelectorFromSet(ps.SelectorLabels()).String()
	if podsErr != nil {
		unknown := func(condType string) conditions.Condition {
			return conditions.Condition{Type: condType, Status: metav1.ConditionUnknown, Reason: appsv1alpha1.ReasonReadFailed,
				Message: "the pods could not be read: " + podsErr.Error()}
		}
		conditions.SetHealthConditions(&status.Conditions, ps.Generation, unknown(appsv1alpha1.ConditionAvailable),
			unknown(appsv1alpha1.ConditionProgressing), unknown(appsv1alpha1.ConditionDegraded))
		return status
	}

	c, names, active := tally(ps, hash, pods)
	status.Replicas, status.ReadyReplicas, status.UpdatedReplicas = c.replicas, c.ready, c.updated
	status.PodNames = podNames(names)

	want := ps.DesiredReplicas()
	// Between deleting a pod of an older template and creating its replacement, the counts alone
	// look like a scale up; the hash of the last completed rollout tells the two apart.
	rollingOut := c.updated < c.replicas || (status.TemplateHash != "" && status.TemplateHash != hash)
	complete := c.replicas == want && c.updated == want && c.ready == want
	if complete {
		status.TemplateHash = hash
	}
	// Pods being added (a scale up, a replacement) do not take away the availability the PodSet had.
	starting := conditions.StartingPods(ps.Status.Conditions, active, want)
	conditions.SetHealthConditions(&status.Conditions, ps.Generation,
		available(want, c, starting),
		d.Progressing(progressing(want, c, complete, rollingOut)),
		d.Degraded(degraded(active, lost, reconcileErr), reconcileErr))
	return status
}

// tally counts the pods of ps that exist and are not terminating, and returns them with their
// ordinals.
func tally(ps *appsv1alpha1.PodSet, hash string, pods []corev1.Pod) (c counts, members []member, active []corev1.Pod) {
	for i := range pods {
		pod := &pods[i]
		if !metav1.IsControlledBy(pod, ps) || pod.DeletionTimestamp != nil {
			continue
		}
		active = append(active, *pod)
		c.replicas++
		if conditions.PodReady(pod) {
			c.ready++
		}
		if isCurrent(pod, hash) {
			c.updated++
		}
		ordinal, _ := resources.Ordinal(ps, pod.Name)
		members = append(members, member{pod, ordinal})
	}
	return c, members, active
}

// podNames lists the pods in ordinal order, which reads better than string order (web-2 before
// web-10), keeping at most PodSetPodNamesLimit.
func podNames(members []member) []string {
	slices.SortFunc(members, func(a, b member) int { return a.ordinal - b.ordinal })
	members = members[:min(len(members), appsv1alpha1.PodSetPodNamesLimit)]
	if len(members) == 0 {
		return nil
	}
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.pod.Name
	}
	return names
}

func available(want int32, c counts, starting int32) conditions.Condition {
	cond := conditions.Condition{Type: appsv1alpha1.ConditionAvailable}
	switch {
	case want == 0:
		cond.Reason, cond.Message = appsv1alpha1.ReasonScaledToZero, "spec.replicas is 0: no pod serves"
	case conditions.ServesMinimum(c.ready, starting, want):
		cond.Status, cond.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonAsExpected
		cond.Message = fmt.Sprintf("%d of %d pods ready", c.ready, want)
		if c.ready < want {
			cond.Message += fmt.Sprintf(", %d starting", want-c.ready)
		}
	case c.replicas == 0:
		cond.Reason, cond.Message = appsv1alpha1.ReasonCreating, "no pod exists yet"
	default:
		cond.Reason = appsv1alpha1.ReasonReplicasNotReady
		cond.Message = fmt.Sprintf("%d of %d pods ready", c.ready, want)
	}
	return cond
}

func progressing(want int32, c counts, complete, rollingOut bool) conditions.Condition {
	cond := conditions.Condition{Type: appsv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue}
	switch {
	case complete:
		cond.Status, cond.Reason = metav1.ConditionFalse, appsv1alpha1.ReasonRolloutComplete
		cond.Message = fmt.Sprintf("%d pods ready, all from the current template", want)
	case c.replicas == 0:
		cond.Reason = appsv1alpha1.ReasonCreating
		cond.Message = fmt.Sprintf("creating %d pods", want)
	case rollingOut:
		cond.Reason = appsv1alpha1.ReasonRollingOut
		cond.Message = fmt.Sprintf("replacing pods of an older template: %d of %d from the current one", c.updated, want)
	default:
		cond.Reason = appsv1alpha1.ReasonScaling
		cond.Message = fmt.Sprintf("scaling to %d pods: %d exist, %d ready", want, c.replicas, c.ready)
	}
	return cond
}

// degraded is True when the pass failed or one of the PodSet's pods cannot run or is on a lost node
// (PodsDegraded).
func degraded(pods []corev1.Pod, lost []conditions.PodProblem, reconcileErr error) conditions.Condition {
	if reconcileErr != nil {
		return conditions.Condition{Type: appsv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue,
			Reason: failure.Reason(reconcileErr), Message: reconcileErr.Error()}
	}
	return conditions.PodsDegraded(pods, lost, nil)
}
