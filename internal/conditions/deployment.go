package conditions

import (
	"cmp"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/failure"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// DeploymentWant is what a kind asks of the Deployment that runs it.
type DeploymentWant struct {
	Replicas  int32
	Image     string
	Container string
}

// ContainerImage is the image of the named container of a Deployment's pod template, or empty.
func ContainerImage(dep *appsv1.Deployment, container string) string {
	if dep == nil {
		return ""
	}
	return parts.ContainerImage(&dep.Spec.Template, container)
}

// DeploymentComplete is true when the Deployment runs the wanted image on exactly the wanted
// number of pods, all of them available.
func DeploymentComplete(dep *appsv1.Deployment, want DeploymentWant) bool {
	if dep == nil || dep.Status.ObservedGeneration < dep.Generation || ContainerImage(dep, want.Container) != want.Image {
		return false
	}
	return dep.Spec.Replicas != nil && *dep.Spec.Replicas == want.Replicas &&
		dep.Status.Replicas == want.Replicas && dep.Status.UpdatedReplicas == want.Replicas &&
		dep.Status.AvailableReplicas == want.Replicas
}

// DeploymentAvailable is the Available condition of a kind that runs on a Deployment (nil when it
// does not exist yet, or could not be read when readErr is set). It follows the Deployment's own
// minimum availability, replicas − maxUnavailable, except that the replicas a scale up adds
// (starting, from StartingPods) are not counted as missing: the pods that served still serve, so a
// scale from 3 to 5 keeps a healthy application Available.
func DeploymentAvailable(dep *appsv1.Deployment, want DeploymentWant, starting int32, readErr error) Condition {
	c := Condition{Type: appsv1alpha1.ConditionAvailable}
	switch {
	case want.Replicas == 0:
		c.Reason, c.Message = appsv1alpha1.ReasonScaledToZero, "spec.replicas is 0: no pod serves"
	case dep == nil && readErr != nil:
		c.Status, c.Reason = metav1.ConditionUnknown, appsv1alpha1.ReasonReadFailed
		c.Message = "the Deployment could not be observed: " + readErr.Error()
	case dep == nil:
		c.Reason, c.Message = appsv1alpha1.ReasonCreating, "the Deployment is being created"
	case ServesMinimum(dep.Status.AvailableReplicas, starting, MinAvailable(dep, want.Replicas)):
		c.Status, c.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonAsExpected
		c.Message = fmt.Sprintf("%d of %d replicas available", dep.Status.AvailableReplicas, want.Replicas)
	default:
		c.Reason = appsv1alpha1.ReasonReplicasNotReady
		c.Message = fmt.Sprintf("%d of %d replicas available, %d needed", dep.Status.AvailableReplicas, want.Replicas,
			MinAvailable(dep, want.Replicas))
	}
	return c
}

// MinAvailable is the number of available replicas below which the Deployment controller reports
// the Deployment unavailable: replicas less maxUnavailable (rounded down, and 1 when both
// maxUnavailable and maxSurge come to 0), or all replicas for the Recreate strategy.
func MinAvailable(dep *appsv1.Deployment, replicas int32) int32 {
	rolling := dep.Spec.Strategy.RollingUpdate
	if dep.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType || rolling == nil || replicas == 0 {
		return replicas
	}
	quarter := intstr.FromString("25%")
	surge, errSurge := intstr.GetScaledValueFromIntOrPercent(cmp.Or(rolling.MaxSurge, &quarter), int(replicas), true)
	unavailable, errUnavailable := intstr.GetScaledValueFromIntOrPercent(cmp.Or(rolling.MaxUnavailable, &quarter), int(replicas), false)
	if errSurge != nil || errUnavailable != nil {
		return replicas
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return replicas - min(int32(unavailable), replicas)
}

// DeploymentProgressing is the Progressing condition of a kind that runs on a Deployment.
func DeploymentProgressing(dep *appsv1.Deployment, want DeploymentWant, complete bool, readErr error) Condition {
	c := Condition{Type: appsv1alpha1.ConditionProgressing}
	switch {
	case complete:
		c.Reason = appsv1alpha1.ReasonRolloutComplete
		c.Message = fmt.Sprintf("%d replicas run %s", want.Replicas, want.Image)
	case dep == nil && readErr != nil:
		c.Status, c.Reason = metav1.ConditionUnknown, appsv1alpha1.ReasonReadFailed
		c.Message = "the Deployment could not be observed: " + readErr.Error()
	case dep == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonCreating, "the Deployment is being created"
	case ContainerImage(dep, want.Container) != want.Image || dep.Status.UpdatedReplicas < dep.Status.Replicas:
		c.Status, c.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonRollingOut
		c.Message = fmt.Sprintf("rolling out %s: %d of %d replicas updated", want.Image, dep.Status.UpdatedReplicas, want.Replicas)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonScaling
		c.Message = fmt.Sprintf("scaling to %d replicas: %d available", want.Replicas, dep.Status.AvailableReplicas)
	}
	return c
}

// DeploymentDegraded is the Degraded condition of a kind that runs on a Deployment: the pass
// failed, a pod cannot run or is on a lost node (PodsDegraded), or the Deployment controller
// reports a rollout that cannot finish. Pods that could not be read leave it Unknown, unless
// something else already shows it Degraded.
func DeploymentDegraded(dep *appsv1.Deployment, pods []corev1.Pod, lost []PodProblem, podsErr, reconcileErr error) Condition {
	c := Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected}
	if reconcileErr != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, failure.Reason(reconcileErr), reconcileErr.Error()
		return c
	}
	fromPods := PodsDegraded(pods, lost, podsErr)
	if fromPods.IsTrue() {
		return fromPods
	}
	if dep != nil {
		for _, dc := range dep.Status.Conditions {
			switch {
			case dc.Type == appsv1.DeploymentProgressing && dc.Status == corev1.ConditionFalse && dc.Reason == appsv1alpha1.ReasonProgressDeadline:
				c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonProgressDeadline, dc.Message
			case dc.Type == appsv1.DeploymentReplicaFailure && dc.Status == corev1.ConditionTrue:
				c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonReplicaFailure, dc.Message
			}
		}
	}
	if c.IsTrue() {
		return c
	}
	return fromPods
}
