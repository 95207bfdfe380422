package parts

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// ExporterUser is the uid exporters run as: the exporter images name their user rather than give
// its number, and the kubelet refuses runAsNonRoot for a user it cannot see is not root.
const ExporterUser = 65534

// Exporter is what one kind's exporter container needs beyond the Monitoring spec.
type Exporter struct {
	DefaultImage string
	Port         int32
	Args         []string
	Mounts       []*corev1ac.VolumeMountApplyConfiguration
}

// DefaultExporterResources are the exporter's when the spec gives none: an exporter answers one
// scrape at a time and keeps no state.
func DefaultExporterResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("16Mi"),
		},
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
}

// ExporterSecurityContext is the restricted standard with a read-only root filesystem: an exporter
// writes no file.
func ExporterSecurityContext() *corev1ac.SecurityContextApplyConfiguration {
	return corev1ac.SecurityContext().
		WithRunAsNonRoot(true).
		WithRunAsUser(ExporterUser).
		WithAllowPrivilegeEscalation(false).
		WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")).
		WithReadOnlyRootFilesystem(true).
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
}

// ExporterContainer is the exporter container that monitoring asks for, or nil when it is off.
func ExporterContainer(monitoring appsv1alpha1.Monitoring, e Exporter) *corev1ac.ContainerApplyConfiguration {
	if !monitoring.Enabled {
		return nil
	}
	resources := DefaultExporterResources()
	if monitoring.Resources != nil {
		resources = *monitoring.Resources
	}
	c := Container(appsv1alpha1.ExporterContainerName, monitoring.ExporterImage(e.DefaultImage)).
		WithArgs(e.Args...).
		WithPorts(corev1ac.ContainerPort().WithName(appsv1alpha1.ExporterPortName).WithContainerPort(e.Port).WithProtocol(corev1.ProtocolTCP)).
		WithSecurityContext(ExporterSecurityContext()).
		WithReadinessProbe(corev1ac.Probe().
			WithHTTPGet(corev1ac.HTTPGetAction().WithPath("/metrics").WithPort(intstr.FromString(appsv1alpha1.ExporterPortName))).
			WithPeriodSeconds(10).
			WithTimeoutSeconds(5))
	if len(resources.Limits) > 0 || len(resources.Requests) > 0 || len(resources.Claims) > 0 {
		c.WithResources(ApplyConfiguration[corev1ac.ResourceRequirementsApplyConfiguration](resources))
	}
	if len(e.Mounts) > 0 {
		c.WithVolumeMounts(e.Mounts...)
	}
	return c
}
