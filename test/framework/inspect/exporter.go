package inspect

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// ExporterProblem says how template's exporter container differs from the one monitoring with
// its defaults runs (image, args, the port named metrics, a restricted security context, the
// default resources), or is empty.
func ExporterProblem(template corev1.PodTemplateSpec, image string, port int32, args ...string) string {
	var c *corev1.Container
	for i := range template.Spec.Containers {
		if template.Spec.Containers[i].Name == appsv1alpha1.ExporterContainerName {
			c = &template.Spec.Containers[i]
		}
	}
	switch {
	case c == nil:
		return "the pod template has no exporter container"
	case c.Image != image || strings.Join(c.Args, " ") != strings.Join(args, " "):
		return fmt.Sprintf("exporter image/args = %s/%v, want %s/%v", c.Image, c.Args, image, args)
	case len(c.Ports) != 1 || c.Ports[0].Name != appsv1alpha1.ExporterPortName || c.Ports[0].ContainerPort != port:
		return fmt.Sprintf("exporter ports = %+v, want metrics %d", c.Ports, port)
	}
	sc := c.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil ||
		fmt.Sprint(sc.Capabilities.Drop) != "[ALL]" || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		return fmt.Sprintf("exporter security context not restricted: %+v", sc)
	}
	cpu, memory, limit := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]
	if cpu.String() != "10m" || memory.String() != "16Mi" || limit.String() != "64Mi" {
		return fmt.Sprintf("exporter resources = %+v, want requests 10m/16Mi and a 64Mi limit", c.Resources)
	}
	return ""
}

// HasContainer tells whether template runs a container named name.
func HasContainer(template corev1.PodTemplateSpec, name string) bool {
	for _, c := range template.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}
