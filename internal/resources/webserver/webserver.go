// Package webserver builds the children of a WebServer: its Deployment, its Service and the
// ConfigMap of nginx's server block.
package webserver

import (
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// ContainerName is the name of the nginx container in every WebServer pod.
const ContainerName = "nginx"

// portName names the container port so that the Service and the probes follow a port change.
const portName = "http"

// Deployment is the desired Deployment of a WebServer.
func Deployment(ws *appsv1alpha1.WebServer) *appsv1ac.DeploymentApplyConfiguration {
	selector := ws.SelectorLabels()
	return appsv1ac.Deployment(ws.ChildName(), ws.Namespace).
		WithLabels(parts.Labels(selector, appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(ws, appsv1alpha1.GroupVersion.WithKind("WebServer"))).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(ws.DesiredReplicas()).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector)).
			// A new version comes up before an old pod goes, so an upgrade never lowers capacity.
			WithStrategy(appsv1ac.DeploymentStrategy().
				WithType("RollingUpdate").
				WithRollingUpdate(appsv1ac.RollingUpdateDeployment().
					WithMaxUnavailable(intstr.FromInt32(0)).
					WithMaxSurge(intstr.FromString("25%")))).
			WithTemplate(podTemplate(ws, selector)))
}

func podTemplate(ws *appsv1alpha1.WebServer, selector map[string]string) *corev1ac.PodTemplateSpecApplyConfiguration {
	spec := ws.Spec
	podSecurity := spec.PodSecurityContext
	if podSecurity == nil {
		podSecurity = parts.RestrictedPodSecurityContext()
	}
	pod := corev1ac.PodSpec().
		// nginx never calls the Kubernetes API: its pods get no token to leak.
		WithAutomountServiceAccountToken(false).
		WithSecurityContext(parts.ApplyConfiguration[corev1ac.PodSecurityContextApplyConfiguration](podSecurity)).
		WithContainers(container(ws)).
		WithVolumes(configVolumeSource(ws))
	if exporter := parts.ExporterContainer(spec.Monitoring, parts.Exporter{
		DefaultImage: appsv1alpha1.DefaultWebServerExporterImage,
		Port:         appsv1alpha1.WebServerExporterPort,
		Args:         ExporterArgs(),
	}); exporter != nil {
		pod.WithContainers(exporter)
	}
	parts.Schedule(pod, spec.NodeSelector, spec.Tolerations, parts.AffinityOrSpread(spec.Affinity, selector))
	annotations := make(map[string]string, len(spec.PodAnnotations)+1)
	for k, v := range spec.PodAnnotations {
		annotations[k] = v
	}
	annotations[ConfigHashAnnotation] = configHash(nginxConfig(ws))
	return corev1ac.PodTemplateSpec().
		// The managed-by label puts the pods in the operator's cache, which reads their status.
		WithLabels(parts.PodLabels(spec.PodLabels, parts.Labels(selector, appsv1alpha1.ManagedByValue))).
		WithAnnotations(annotations).
		WithSpec(pod)
}

// PreStopSleepSeconds is how long a deleted pod keeps serving before nginx is told to stop; endpoint
// changes reach every node's Service rules within it, even on a busy cluster.
const PreStopSleepSeconds = 5

func container(ws *appsv1alpha1.WebServer) *corev1ac.ContainerApplyConfiguration {
	spec := ws.Spec
	security := spec.SecurityContext
	if security == nil {
		security = parts.RestrictedSecurityContext()
	}
	c := parts.Container(ContainerName, spec.Image).
		WithPorts(corev1ac.ContainerPort().WithName(portName).WithContainerPort(spec.Port).WithProtocol(corev1.ProtocolTCP)).
		WithVolumeMounts(configMount()).
		WithSecurityContext(parts.ApplyConfiguration[corev1ac.SecurityContextApplyConfiguration](security)).
		WithReadinessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath(HealthPath).WithPort(intstr.FromString(portName))).
			WithPeriodSeconds(5)).
		WithLivenessProbe(corev1ac.Probe().
			WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString(portName))).
			WithInitialDelaySeconds(10).
			WithPeriodSeconds(10)).
		// A pod being deleted keeps serving until every node's Service rules have dropped it:
		// nginx stops listening at once on its stop signal, and requests routed to it meanwhile
		// would be refused. The kubelet's own sleep needs nothing from the image.
		WithLifecycle(corev1ac.Lifecycle().
			WithPreStop(corev1ac.LifecycleHandler().WithSleep(corev1ac.SleepAction().WithSeconds(PreStopSleepSeconds))))
	if len(spec.Resources.Limits) > 0 || len(spec.Resources.Requests) > 0 || len(spec.Resources.Claims) > 0 {
		c.WithResources(parts.ApplyConfiguration[corev1ac.ResourceRequirementsApplyConfiguration](spec.Resources))
	}
	return c
}

// ExporterArgs are nginx-prometheus-exporter's flags: it reads the stub_status page nginx serves
// on the loopback. The --flag=value form is the one every release of it accepts.
func ExporterArgs() []string {
	return []string{"--nginx.scrape-uri=http://" + StubStatusAddress + StubStatusPath}
}

// Service is the desired Service of a WebServer.
func Service(ws *appsv1alpha1.WebServer) *corev1ac.ServiceApplyConfiguration {
	selector := ws.SelectorLabels()
	return corev1ac.Service(ws.ChildName(), ws.Namespace).
		WithLabels(parts.Labels(selector, appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(ws, appsv1alpha1.GroupVersion.WithKind("WebServer"))).
		WithSpec(parts.ServiceSpec(ws.Spec.Service, selector, portName))
}
