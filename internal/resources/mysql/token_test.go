package mysql

import (
	"testing"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// The pods never call the Kubernetes API, so whatever the spec, they mount no token.
func TestPodsMountNoServiceAccountToken(t *testing.T) {
	tests := []struct {
		name string
		m    *appsv1alpha1.MySQL
	}{
		{"defaults", mysql(nil)},
		{"node selector", mysql(func(m *appsv1alpha1.MySQL) { m.Spec.NodeSelector = map[string]string{"zone": "a"} })},
		{"delete policy", mysql(func(m *appsv1alpha1.MySQL) { m.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := StatefulSet(tc.m, nil, "tools:test").Spec.Template.Spec.AutomountServiceAccountToken
			if got == nil || *got {
				t.Errorf("automountServiceAccountToken = %v, want false", got)
			}
		})
	}
}
