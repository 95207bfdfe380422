package podset

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// The template is the user's: a value set there is kept, an unset one becomes false.
func TestPodServiceAccountToken(t *testing.T) {
	tests := []struct {
		name     string
		template *bool
		want     bool
	}{
		{"unset defaults to no token", nil, false},
		{"explicit false is kept", ptr.To(false), false},
		{"explicit true is kept", ptr.To(true), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := &appsv1alpha1.PodSet{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"},
				Spec:       appsv1alpha1.PodSetSpec{Template: template()},
			}
			ps.Spec.Template.Spec.AutomountServiceAccountToken = tc.template
			before := TemplateHash(&ps.Spec.Template)
			got := Pod(ps, 0, before).Spec.AutomountServiceAccountToken
			if got == nil || *got != tc.want {
				t.Errorf("automountServiceAccountToken = %v, want %v", got, tc.want)
			}
			if ps.Spec.Template.Spec.AutomountServiceAccountToken != tc.template || TemplateHash(&ps.Spec.Template) != before {
				t.Error("Pod changed the PodSet's template")
			}
		})
	}
}
