// Package memcached builds the children of a Memcached: its StatefulSet and its headless Service.
package memcached

import (
	"fmt"

	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// ContainerName is the name of the memcached container in every member pod.
const ContainerName = "memcached"

// portName names the container port so that the Service and the probes follow a port change.
const portName = "memcache"

// memoryHeadroomPercent is the share of the memory limit given to items when memoryMB is unset.
// memcached allocates its hash table, connection buffers and thread stacks beyond -m, so a cache
// sized at the whole limit gets OOM-killed as it fills.
const memoryHeadroomPercent = 80

// gvk is the kind the children's owner references name.
var gvk = appsv1alpha1.GroupVersion.WithKind("Memcached")

// StatefulSet is the desired StatefulSet of a Memcached.
func StatefulSet(mc *appsv1alpha1.Memcached) *appsv1ac.StatefulSetApplyConfiguration {
	selector := mc.SelectorLabels()
	return appsv1ac.StatefulSet(mc.ChildName(), mc.Namespace).
		WithLabels(parts.Labels(selector, appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(mc, gvk)).
		WithSpec(appsv1ac.StatefulSetSpec().
			WithReplicas(mc.DesiredSize()).
			WithServiceName(mc.ChildName()).
			// Members hold no data that another member needs, so they start and stop all at once;
			// the StatefulSet is for the stable names clients hash keys over.
			WithPodManagementPolicy("Parallel").
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector)).
			WithTemplate(podTemplate(mc, selector)))
}

func podTemplate(mc *appsv1alpha1.Memcached, selector map[string]string) *corev1ac.PodTemplateSpecApplyConfiguration {
	spec := mc.Spec
	podSecurity := spec.PodSecurityContext
	if podSecurity == nil {
		podSecurity = restrictedPodSecurityContext()
	}
	pod := corev1ac.PodSpec().
		// memcached never calls the Kubernetes API: its pods get no token to leak.
		WithAutomountServiceAccountToken(false).
		WithSecurityContext(parts.ApplyConfiguration[corev1ac.PodSecurityContextApplyConfiguration](podSecurity)).
		WithContainers(container(mc))
	if exporter := parts.ExporterContainer(spec.Monitoring, parts.Exporter{
		DefaultImage: appsv1alpha1.DefaultMemcachedExporterImage,
		Port:         appsv1alpha1.MemcachedExporterPort,
		Args:         ExporterArgs(mc),
	}); exporter != nil {
		pod.WithContainers(exporter)
	}
	parts.Schedule(pod, spec.NodeSelector, spec.Tolerations, parts.AffinityOrSpread(spec.Affinity, selector))
	// The pods carry the managed-by label so that the operator's cache holds them: the status
	// lists the members that are ready.
	meta := corev1ac.PodTemplateSpec().
		WithLabels(parts.PodLabels(spec.PodLabels, parts.Labels(selector, appsv1alpha1.ManagedByValue))).
		WithSpec(pod)
	if len(spec.PodAnnotations) > 0 {
		meta.WithAnnotations(spec.PodAnnotations)
	}
	return meta
}

// restrictedPodSecurityContext is the restricted default with the image's uid stated: the official
// image names its user, and the kubelet refuses runAsNonRoot for a user it cannot see is not root.
func restrictedPodSecurityContext() *corev1.PodSecurityContext {
	sc := parts.RestrictedPodSecurityContext()
	sc.RunAsUser = ptr.To[int64](appsv1alpha1.MemcachedUser)
	sc.RunAsGroup = ptr.To[int64](appsv1alpha1.MemcachedUser)
	return sc
}

// restrictedSecurityContext adds a read-only root filesystem to the restricted default: memcached
// keeps everything in memory and writes no file.
func restrictedSecurityContext() *corev1.SecurityContext {
	sc := parts.RestrictedSecurityContext()
	sc.ReadOnlyRootFilesystem = ptr.To(true)
	return sc
}

func container(mc *appsv1alpha1.Memcached) *corev1ac.ContainerApplyConfiguration {
	spec := mc.Spec
	security := spec.SecurityContext
	if security == nil {
		security = restrictedSecurityContext()
	}
	probe := func() *corev1ac.ProbeApplyConfiguration {
		return corev1ac.Probe().WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString(portName)))
	}
	c := parts.Container(ContainerName, spec.Image).
		WithArgs(Args(mc)...).
		WithPorts(corev1ac.ContainerPort().WithName(portName).WithContainerPort(spec.Port).WithProtocol(corev1.ProtocolTCP)).
		WithSecurityContext(parts.ApplyConfiguration[corev1ac.SecurityContextApplyConfiguration](security)).
		WithReadinessProbe(probe().WithPeriodSeconds(5)).
		WithLivenessProbe(probe().WithInitialDelaySeconds(10).WithPeriodSeconds(10))
	if len(spec.Resources.Limits) > 0 || len(spec.Resources.Requests) > 0 || len(spec.Resources.Claims) > 0 {
		c.WithResources(parts.ApplyConfiguration[corev1ac.ResourceRequirementsApplyConfiguration](spec.Resources))
	}
	return c
}

// ExporterArgs are memcached_exporter's flags: it asks the member in its own pod for its stats.
func ExporterArgs(mc *appsv1alpha1.Memcached) []string {
	return []string{"--memcached.address=127.0.0.1:" + strconv.Itoa(int(mc.Spec.Port))}
}

// Args are memcached's flags for the spec. They start with a flag, which the official image's
// entrypoint runs as arguments of memcached.
func Args(mc *appsv1alpha1.Memcached) []string {
	args := []string{"-p", strconv.Itoa(int(mc.Spec.Port)), "-U", "0"}
	if mb, ok := MemoryMB(mc.Spec); ok {
		args = append(args, "-m", strconv.FormatInt(mb, 10))
	}
	if mc.Spec.MaxConnections != nil {
		args = append(args, "-c", strconv.Itoa(int(*mc.Spec.MaxConnections)))
	}
	return args
}

// MemoryMB is the item memory of each member in megabytes: memoryMB when set, else 80 % of the
// memory limit (at least the 2 memcached starts with), else nothing, and memcached keeps its own
// default of 64.
func MemoryMB(spec appsv1alpha1.MemcachedSpec) (int64, bool) {
	if spec.MemoryMB != nil {
		return int64(*spec.MemoryMB), true
	}
	limit, ok := spec.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		return 0, false
	}
	// Whole mebibytes first, so that no limit, however large, overflows the multiplication.
	mb := limit.Value() / (1 << 20) * memoryHeadroomPercent / 100
	return max(mb, appsv1alpha1.MinMemcachedMemoryMB), true
}

// MemoryProblem says why spec.memoryMB cannot work with the container's memory limit, or is empty:
// memcached grows to memoryMB as the cache fills, and the kubelet kills a container that passes its
// limit. The API server cannot check it: a rule that reads resource quantities exceeds its cost budget.
func MemoryProblem(spec appsv1alpha1.MemcachedSpec) string {
	limit, ok := spec.Resources.Limits[corev1.ResourceMemory]
	if spec.MemoryMB == nil || !ok || int64(*spec.MemoryMB)<<20 <= limit.Value() {
		return ""
	}
	return fmt.Sprintf("spec.memoryMB %d is above spec.resources.limits.memory %s: memcached grows to it as the cache fills "+
		"and would be killed at the limit; lower spec.memoryMB or raise the limit", *spec.MemoryMB, limit.String())
}

// Service is the desired headless Service of a Memcached: it gives each member a DNS name,
// <member>.<service>.<namespace>.svc, for clients that hash keys over the members.
func Service(mc *appsv1alpha1.Memcached) *corev1ac.ServiceApplyConfiguration {
	selector := mc.SelectorLabels()
	return corev1ac.Service(mc.ChildName(), mc.Namespace).
		WithLabels(parts.Labels(selector, appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(mc, gvk)).
		WithSpec(corev1ac.ServiceSpec().
			WithClusterIP(corev1.ClusterIPNone).
			WithSelector(selector).
			WithPorts(corev1ac.ServicePort().
				WithName(portName).
				WithProtocol(corev1.ProtocolTCP).
				WithPort(mc.Spec.Port).
				WithTargetPort(intstr.FromString(portName))))
}
