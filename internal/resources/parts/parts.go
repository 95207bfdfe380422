// Package parts holds the small pieces every builder shares: labels, owner references, the
// restricted security defaults.
package parts

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// Labels returns the labels of a child: the instance's selector labels plus the managed-by label
// that scopes the operator's cache.
func Labels(selector map[string]string, managedBy string) map[string]string {
	labels := make(map[string]string, len(selector)+1)
	for k, v := range selector {
		labels[k] = v
	}
	labels["app.kubernetes.io/managed-by"] = managedBy
	return labels
}

// PodLabels merges the user's pod labels under the child labels, so that a user's label can never
// take a pod out of its owner's selector.
func PodLabels(user, child map[string]string) map[string]string {
	labels := make(map[string]string, len(user)+len(child))
	for k, v := range user {
		labels[k] = v
	}
	for k, v := range child {
		labels[k] = v
	}
	return labels
}

// ControllerReference makes the owner the managing controller of a child, so that garbage
// collection removes the child with its owner and the owner's controller sees the child's events.
func ControllerReference(owner metav1.Object, gvk schema.GroupVersionKind) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(gvk.GroupVersion().String()).
		WithKind(gvk.Kind).
		WithName(owner.GetName()).
		WithUID(owner.GetUID()).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// RestrictedPodSecurityContext meets the restricted pod security standard at pod level.
func RestrictedPodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// RestrictedSecurityContext meets the restricted pod security standard at container level.
func RestrictedSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// ApplyConfiguration converts a typed API value to its apply configuration. The two share one
// JSON shape by construction, so a round trip through JSON is exact and keeps the builders free of
// field-by-field copies.
func ApplyConfiguration[AC any](in any) *AC {
	raw, err := json.Marshal(in)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", in, err))
	}
	out := new(AC)
	if err := json.Unmarshal(raw, out); err != nil {
		panic(fmt.Sprintf("unmarshal %T into %T: %v", in, out, err))
	}
	return out
}

// Schedule sets the scheduling constraints a user gave on pod, leaving out the empty ones.
func Schedule(pod *corev1ac.PodSpecApplyConfiguration, nodeSelector map[string]string, tolerations []corev1.Toleration, affinity *corev1.Affinity) {
	if len(nodeSelector) > 0 {
		pod.WithNodeSelector(nodeSelector)
	}
	for i := range tolerations {
		pod.WithTolerations(ApplyConfiguration[corev1ac.TolerationApplyConfiguration](tolerations[i]))
	}
	if affinity != nil {
		pod.WithAffinity(ApplyConfiguration[corev1ac.AffinityApplyConfiguration](affinity))
	}
}

// ServiceSpec is the spec of a Service that exposes pods as svc says, on the container port named
// targetPort.
func ServiceSpec(svc appsv1alpha1.WebServerService, selector map[string]string, targetPort string) *corev1ac.ServiceSpecApplyConfiguration {
	serviceType := svc.Type
	if serviceType == "" {
		serviceType = appsv1alpha1.ServiceTypeClusterIP
	}
	servicePort := svc.Port
	if servicePort == 0 {
		servicePort = 80
	}
	port := corev1ac.ServicePort().
		WithName(targetPort).
		WithProtocol(corev1.ProtocolTCP).
		WithPort(servicePort).
		WithTargetPort(intstr.FromString(targetPort))
	if svc.NodePort != nil && serviceType != appsv1alpha1.ServiceTypeClusterIP {
		port.WithNodePort(*svc.NodePort)
	}
	return corev1ac.ServiceSpec().
		WithType(corev1.ServiceType(serviceType)).
		WithSelector(selector).
		WithPorts(port)
}

// ContainerImage is the image of the named container of a pod template, or empty.
func ContainerImage(template *corev1.PodTemplateSpec, container string) string {
	for _, c := range template.Spec.Containers {
		if c.Name == container {
			return c.Image
		}
	}
	return ""
}

// Container is a container of the given name and image that keeps the last lines of its log as its
// termination message when it fails: the operator reads why a container keeps exiting from them.
func Container(name, image string) *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().WithName(name).WithImage(image).
		WithTerminationMessagePolicy(corev1.TerminationMessageFallbackToLogsOnError)
}
