package podset

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/podset"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// TestRollbackRebuildsTheGoodRevision checks that the template a rollback builds from, read back
// from the last good spec as the API server keeps it, hashes to the last good revision, whatever
// the template holds: the pods it makes are then current, and those of any other revision stale.
// Only the template comes from the good spec.
func TestRollbackRebuildsTheGoodRevision(t *testing.T) {
	container := func(change func(*corev1.Container)) appsv1alpha1.PodSetTemplate {
		c := corev1.Container{Name: "main", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}
		change(&c)
		return appsv1alpha1.PodSetTemplate{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	}
	tests := []struct {
		name     string
		template appsv1alpha1.PodSetTemplate
	}{
		{"image only", container(func(*corev1.Container) {})},
		{"quantities written loosely", container(func(c *corev1.Container) {
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5"), corev1.ResourceMemory: resource.MustParse("1e9")}
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		})},
		{"ports by name and by number", container(func(c *corev1.Container) {
			c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}}
			c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
		})},
		{"metadata and pod fields", func() appsv1alpha1.PodSetTemplate {
			tmpl := container(func(c *corev1.Container) { c.Env = []corev1.EnvVar{{Name: "A", Value: "1"}} })
			tmpl.Metadata = appsv1alpha1.PodSetTemplateMetadata{Labels: map[string]string{"tier": "web"}, Annotations: map[string]string{"note": "x"}}
			tmpl.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
			tmpl.Spec.NodeSelector = map[string]string{"zone": "a"}
			return tmpl
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := appsv1alpha1.PodSet{Spec: appsv1alpha1.PodSetSpec{Replicas: ptr.To[int32](3), Template: tt.template}}
			desired := revision(&good)
			// The API server keeps the snapshot as JSON of its own making.
			var kept map[string]any
			if err := json.Unmarshal(desired.Spec.Raw, &kept); err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(kept)
			if err != nil {
				t.Fatal(err)
			}
			d := rollout.Decision{RollBack: true, Status: appsv1alpha1.RolloutStatus{
				LastGood: &appsv1alpha1.GoodRevision{Name: desired.Name, Spec: runtime.RawExtension{Raw: raw}},
			}}
			spec := good.Spec.DeepCopy()
			spec.Template.Spec.Containers[0].Image = "busybox:broken"
			spec.Replicas, spec.MaxUnavailable = ptr.To[int32](5), 2
			target, err := rollout.Target(d, *spec, podFields)
			if err != nil {
				t.Fatal(err)
			}
			if got := resources.TemplateHash(&target.Template); got != desired.Name {
				t.Errorf("the rolled back template hashes to %s, want the good revision %s", got, desired.Name)
			}
			if *target.Replicas != 5 || target.MaxUnavailable != 2 {
				t.Errorf("replicas %d, maxUnavailable %d after the rollback, want the spec's 5, 2", *target.Replicas, target.MaxUnavailable)
			}
		})
	}
}
