package wordpress

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// The pods never call the Kubernetes API, so whatever the spec, they mount no token.
func TestPodsMountNoServiceAccountToken(t *testing.T) {
	tests := []struct {
		name string
		wp   *appsv1alpha1.WordPress
	}{
		{"defaults", wordpress(nil)},
		{"shared content volume", wordpress(func(wp *appsv1alpha1.WordPress) {
			wp.Spec.Storage.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Deployment(tc.wp, database(nil)).Spec.Template.Spec.AutomountServiceAccountToken
			if got == nil || *got {
				t.Errorf("automountServiceAccountToken = %v, want false", got)
			}
		})
	}
}
