package memcached

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// The pods never call the Kubernetes API, so whatever the spec, they mount no token.
func TestPodsMountNoServiceAccountToken(t *testing.T) {
	tests := []struct {
		name string
		mc   *appsv1alpha1.Memcached
	}{
		{"defaults", memcached(nil)},
		{"own pod security context", memcached(func(mc *appsv1alpha1.Memcached) {
			mc.Spec.PodSecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
		})},
		{"node selector", memcached(func(mc *appsv1alpha1.Memcached) { mc.Spec.NodeSelector = map[string]string{"zone": "a"} })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := StatefulSet(tc.mc).Spec.Template.Spec.AutomountServiceAccountToken
			if got == nil || *got {
				t.Errorf("automountServiceAccountToken = %v, want false", got)
			}
		})
	}
}
