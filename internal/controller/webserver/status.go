package webserver

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/reconcile"
	resources "github.com/appkeeper/appkeeper/internal/resources/webserver"
)

// computeStatus derives the status of ws from its Deployment as last observed (nil when it does
// not exist yet) and from the error of the current pass, if any.
func computeStatus(ws *appsv1alpha1.WebServer, dep *appsv1.Deployment, reconcileErr error) appsv1alpha1.WebServerStatus {
	status := *ws.Status.DeepCopy()
	status.ObservedGeneration = ws.Generation
	status.Selector = labels.SelectorFromSet(ws.SelectorLabels()).String()
	status.Replicas, status.ReadyReplicas, status.UpdatedReplicas = 0, 0, 0
	if dep != nil {
		status.Replicas = dep.Status.Replicas
		status.ReadyReplicas = dep.Status.ReadyReplicas
		status.UpdatedReplicas = dep.Status.UpdatedReplicas
	}
	complete := rolloutComplete(ws, dep)
	if complete {
		status.Image = ws.Spec.Image
	}
	reconcile.SetConditions(&status.Conditions, ws.Generation,
		available(ws, dep),
		progressing(ws, dep, complete),
		degraded(dep, reconcileErr))
	return status
}

// rolloutComplete is true when the Deployment runs the current spec on exactly the desired number
// of pods, all of them available.
func rolloutComplete(ws *appsv1alpha1.WebServer, dep *appsv1.Deployment) bool {
	if dep == nil || dep.Status.ObservedGeneration < dep.Generation || deploymentImage(dep) != ws.Spec.Image {
		return false
	}
	want := ws.DesiredReplicas()
	return dep.Spec.Replicas != nil && *dep.Spec.Replicas == want &&
		dep.Status.Replicas == want && dep.Status.UpdatedReplicas == want && dep.Status.AvailableReplicas == want
}

func deploymentImage(dep *appsv1.Deployment) string {
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name == resources.ContainerName {
			return c.Image
		}
	}
	return ""
}

func available(ws *appsv1alpha1.WebServer, dep *appsv1.Deployment) reconcile.Condition {
	want := ws.DesiredReplicas()
	c := reconcile.Condition{Type: appsv1alpha1.ConditionAvailable}
	switch {
	case want == 0:
		c.Reason, c.Message = appsv1alpha1.ReasonScaledToZero, "spec.replicas is 0: no pod serves"
	case dep == nil:
		c.Reason, c.Message = appsv1alpha1.ReasonCreating, "the Deployment is being created"
	case dep.Status.AvailableReplicas >= want:
		c.Status, c.Reason = true, appsv1alpha1.ReasonAsExpected
		c.Message = fmt.Sprintf("%d of %d replicas available", dep.Status.AvailableReplicas, want)
	default:
		c.Reason = appsv1alpha1.ReasonReplicasNotReady
		c.Message = fmt.Sprintf("%d of %d replicas available", dep.Status.AvailableReplicas, want)
	}
	return c
}

func progressing(ws *appsv1alpha1.WebServer, dep *appsv1.Deployment, complete bool) reconcile.Condition {
	c := reconcile.Condition{Type: appsv1alpha1.ConditionProgressing}
	switch {
	case complete:
		c.Reason = appsv1alpha1.ReasonRolloutComplete
		c.Message = fmt.Sprintf("%d replicas run %s", ws.DesiredReplicas(), ws.Spec.Image)
	case dep == nil:
		c.Status, c.Reason, c.Message = true, appsv1alpha1.ReasonCreating, "the Deployment is being created"
	case deploymentImage(dep) != ws.Spec.Image || dep.Status.UpdatedReplicas < dep.Status.Replicas:
		c.Status, c.Reason = true, appsv1alpha1.ReasonRollingOut
		c.Message = fmt.Sprintf("rolling out %s: %d of %d replicas updated", ws.Spec.Image, dep.Status.UpdatedReplicas, ws.DesiredReplicas())
	default:
		c.Status, c.Reason = true, appsv1alpha1.ReasonScaling
		c.Message = fmt.Sprintf("scaling to %d replicas: %d available", ws.DesiredReplicas(), dep.Status.AvailableReplicas)
	}
	return c
}

func degraded(dep *appsv1.Deployment, reconcileErr error) reconcile.Condition {
	c := reconcile.Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected}
	if reconcileErr != nil {
		c.Status, c.Reason, c.Message = true, appsv1alpha1.ReasonReconcileFailed, reconcileErr.Error()
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
