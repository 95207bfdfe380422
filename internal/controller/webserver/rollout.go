package webserver

import (
	appsv1 "k8s.io/api/apps/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	resources "github.com/appkeeper/appkeeper/internal/resources/webserver"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// revision is the revision of the pods the spec as written asks for.
func revision(ws *appsv1alpha1.WebServer) rollout.Revision {
	return rollout.Revision{
		Name:  rollout.Hash(resources.Deployment(ws).Spec.Template),
		Image: ws.Spec.Image,
		Spec:  rollout.Snapshot(ws.Spec),
	}
}

// podFields copies into spec what makes a WebServer's pods from the spec of a good revision.
func podFields(spec, good *appsv1alpha1.WebServerSpec) {
	spec.Image, spec.Port, spec.Resources = good.Image, good.Port, good.Resources
	spec.PodSecurityContext, spec.SecurityContext = good.PodSecurityContext, good.SecurityContext
	spec.NodeSelector, spec.Tolerations, spec.Affinity = good.NodeSelector, good.Tolerations, good.Affinity
	spec.PodLabels, spec.PodAnnotations = good.PodLabels, good.PodAnnotations
	spec.Monitoring = good.Monitoring
}

// rolloutComplete tells whether the Deployment runs the pass's target on every replica, at least
// one of them, all available: evidence that the target's revision is good.
func rolloutComplete(dep *appsv1.Deployment, target *appsv1alpha1.WebServer) bool {
	want := conditions.DeploymentWant{Replicas: target.DesiredReplicas(), Image: target.Spec.Image, Container: resources.ContainerName}
	return want.Replicas > 0 && conditions.DeploymentComplete(dep, want)
}
