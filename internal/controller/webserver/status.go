package webserver

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
	resources "github.com/appkeeper/appkeeper/internal/resources/webserver"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// computeStatus derives the status of ws, whose spec is the one the pass applied (the last good
// revision's pod fields while the spec's revision is rolled back), from the pass's rollout
// decision, from its Deployment as last observed (nil when it does not exist yet or could not be
// read), from its pods (or the error reading them), the problems of those on lost nodes, and from
// the error of the current pass, if any.
func computeStatus(ws *appsv1alpha1.WebServer, d rollout.Decision, dep *appsv1.Deployment, pods []corev1.Pod, lost []conditions.PodProblem, podsErr, reconcileErr error) appsv1alpha1.WebServerStatus {
	status := *ws.Status.DeepCopy()
	status.Rollout = d.Status
	status.ObservedGeneration = ws.Generation
	status.Selector = labels.SelectorFromSet(ws.SelectorLabels()).String()
	status.Replicas, status.ReadyReplicas, status.UpdatedReplicas = 0, 0, 0
	if dep != nil {
		status.Replicas = dep.Status.Replicas
		status.ReadyReplicas = dep.Status.ReadyReplicas
		status.UpdatedReplicas = dep.Status.UpdatedReplicas
	}
	want := conditions.DeploymentWant{Replicas: ws.DesiredReplicas(), Image: ws.Spec.Image, Container: resources.ContainerName}
	complete := conditions.DeploymentComplete(dep, want)
	if complete {
		status.Image = ws.Spec.Image
	}
	conditions.SetHealthConditions(&status.Conditions, ws.Generation,
		conditions.DeploymentAvailable(dep, want, conditions.StartingPods(ws.Status.Conditions, pods, ws.DesiredReplicas()), reconcileErr),
		d.Progressing(conditions.DeploymentProgressing(dep, want, complete, reconcileErr)),
		d.Degraded(conditions.DeploymentDegraded(dep, pods, lost, podsErr, reconcileErr), reconcileErr))
	return status
}

func deploymentImage(dep *appsv1.Deployment) string {
	return conditions.ContainerImage(dep, resources.ContainerName)
}

// recordUpgrade emits Upgraded when a rollout to a new image has just completed.
func (r *Reconciler) recordUpgrade(original, ws *appsv1alpha1.WebServer) {
	if original.Status.Image != "" && ws.Status.Image != original.Status.Image {
		event.Upgraded.Emit(r.Recorder, ws, nil,
			"every replica runs %s", ws.Status.Image)
	}
}
