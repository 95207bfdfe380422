package reconcile

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/common"
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
	return common.ContainerImage(&dep.Spec.Template, container)
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
// does not exist yet).
func DeploymentAvailable(dep *appsv1.Deployment, want DeploymentWant) Condition {
	c := Condition{Type: appsv1alpha1.ConditionAvailable}
	switch {
	case want.Replicas == 0:
		c.Reason, c.Message = appsv1alpha1.ReasonScaledToZero, "spec.replicas is 0: no pod serves"
	case dep == nil:
		c.Reason, c.Message = appsv1alpha1.ReasonCreating, "the Deployment is being created"
	case dep.Status.AvailableReplicas >= want.Replicas:
		c.Status, c.Reason = true, appsv1alpha1.ReasonAsExpected
		c.Message = fmt.Sprintf("%d of %d replicas available", dep.Status.AvailableReplicas, want.Replicas)
	default:
		c.Reason = appsv1alpha1.ReasonReplicasNotReady
		c.Message = fmt.Sprintf("%d of %d replicas available", dep.Status.AvailableReplicas, want.Replicas)
	}
	return c
}

// DeploymentProgressing is the Progressing condition of a kind that runs on a Deployment.
func DeploymentProgressing(dep *appsv1.Deployment, want DeploymentWant, complete bool) Condition {
	c := Condition{Type: appsv1alpha1.ConditionProgressing}
	switch {
	case complete:
		c.Reason = appsv1alpha1.ReasonRolloutComplete
		c.Message = fmt.Sprintf("%d replicas run %s", want.Replicas, want.Image)
	case dep == nil:
		c.Status, c.Reason, c.Message = true, appsv1alpha1.ReasonCreating, "the Deployment is being created"
	case ContainerImage(dep, want.Container) != want.Image || dep.Status.UpdatedReplicas < dep.Status.Replicas:
		c.Status, c.Reason = true, appsv1alpha1.ReasonRollingOut
		c.Message = fmt.Sprintf("rolling out %s: %d of %d replicas updated", want.Image, dep.Status.UpdatedReplicas, want.Replicas)
	default:
		c.Status, c.Reason = true, appsv1alpha1.ReasonScaling
		c.Message = fmt.Sprintf("scaling to %d replicas: %d available", want.Replicas, dep.Status.AvailableReplicas)
	}
	return c
}

// DeploymentDegraded is the Degraded condition of a kind that runs on a Deployment: the pass failed,
// or the Deployment controller reports a rollout that cannot finish.
func DeploymentDegraded(dep *appsv1.Deployment, reconcileErr error) Condition {
	c := Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected}
	if reconcileErr != nil {
		c.Status, c.Reason, c.Message = true, ErrorReason(reconcileErr), reconcileErr.Error()
		return c
	}
	if dep == nil {
		return c
	}
	for _, dc := range dep.Status.Conditions {
		switch {
		case dc.Type == appsv1.DeploymentProgressing && dc.Status == corev1.ConditionFalse && dc.Reason == appsv1alpha1.ReasonProgressDeadline:
			c.Status, c.Reason, c.Message = true, appsv1alpha1.ReasonProgressDeadline, dc.Message
		case dc.Type == appsv1.DeploymentReplicaFailure && dc.Status == corev1.ConditionTrue:
			c.Status, c.Reason, c.Message = true, appsv1alpha1.ReasonReplicaFailure, dc.Message
		}
	}
	return c
}
