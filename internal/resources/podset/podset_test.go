package podset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func template() appsv1alpha1.PodSetTemplate {
	return appsv1alpha1.PodSetTemplate{
		Metadata: appsv1alpha1.PodSetTemplateMetadata{
			Labels:      map[string]string{"tier": "cache", "b": "2", "a": "1"},
			Annotations: map[string]string{"note": "x"},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}}},
	}
}

func TestTemplateHash(t *testing.T) {
	base := template()
	tests := []struct {
		name   string
		change func(*appsv1alpha1.PodSetTemplate)
		same   bool
	}{
		{"unchanged", func(*appsv1alpha1.PodSetTemplate) {}, true},
		{"same labels built in another order", func(t *appsv1alpha1.PodSetTemplate) {
			t.Metadata.Labels = map[string]string{"a": "1", "b": "2", "tier": "cache"}
		}, true},
		{"image", func(t *appsv1alpha1.PodSetTemplate) { t.Spec.Containers[0].Image = "busybox:1.37" }, false},
		{"command", func(t *appsv1alpha1.PodSetTemplate) { t.Spec.Containers[0].Command = []string{"sleep", "60"} }, false},
		{"label value", func(t *appsv1alpha1.PodSetTemplate) { t.Metadata.Labels["tier"] = "web" }, false},
		{"annotation", func(t *appsv1alpha1.PodSetTemplate) { t.Metadata.Annotations["note"] = "y" }, false},
		{"second container", func(t *appsv1alpha1.PodSetTemplate) {
			t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: "side", Image: "busybox:1.36"})
		}, false},
		{"node selector", func(t *appsv1alpha1.PodSetTemplate) { t.Spec.NodeSelector = map[string]string{"zone": "a"} }, false},
	}
	want := TemplateHash(&base)
	if len(want) != 16 {
		t.Fatalf("hash %q is not 16 hex digits", want)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := template()
			tt.change(&changed)
			got := TemplateHash(&changed)
			if (got == want) != tt.same {
				t.Errorf("hash %s, base %s: want same=%v", got, want, tt.same)
			}
			if again := TemplateHash(&changed); again != got {
				t.Errorf("hash not stable: %s then %s", got, again)
			}
		})
	}
}

func TestPodNameAndOrdinal(t *testing.T) {
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	for _, ordinal := range []int{0, 1, 9, 10, 199} {
		name := PodName(ps, ordinal)
		if got, ok := Ordinal(ps, name); !ok || got != ordinal {
			t.Errorf("Ordinal(%q) = %d, %v; want %d", name, got, ok, ordinal)
		}
	}
	if got := PodName(ps, 12); got != "web-12" {
		t.Errorf("PodName(12) = %q", got)
	}
	for _, name := range []string{"web", "web-", "web-x", "web-01", "web--1", "web-1-0", "other-1", "webx-1", "web-+1"} {
		if n, ok := Ordinal(ps, name); ok {
			t.Errorf("Ordinal(%q) = %d, want no ordinal", name, n)
		}
	}
}

func TestPod(t *testing.T) {
	ps := &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"},
		Spec:       appsv1alpha1.PodSetSpec{Template: template()},
	}
	// A template label may not take the pod out of the selector.
	ps.Spec.Template.Metadata.Labels[appsv1alpha1.LabelInstance] = "other"
	pod := Pod(ps, 2, "abc")

	if pod.Name != "web-2" || pod.Namespace != "shop" {
		t.Errorf("pod %s/%s, want shop/web-2", pod.Namespace, pod.Name)
	}
	wantLabels := map[string]string{
		"tier": "cache", "a": "1", "b": "2",
		appsv1alpha1.LabelName: "podset", appsv1alpha1.LabelInstance: "web",
		appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue,
	}
	if len(pod.Labels) != len(wantLabels) {
		t.Errorf("labels = %v, want %v", pod.Labels, wantLabels)
	}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	if pod.Annotations[appsv1alpha1.AnnotationTemplateHash] != "abc" || pod.Annotations["note"] != "x" {
		t.Errorf("annotations = %v", pod.Annotations)
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.UID != "uid-1" || owner.Kind != "PodSet" || owner.APIVersion != appsv1alpha1.GroupVersion.String() ||
		owner.BlockOwnerDeletion == nil || !*owner.BlockOwnerDeletion {
		t.Errorf("controller reference = %+v", owner)
	}
	if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Image != "busybox:1.36" {
		t.Errorf("containers = %+v", pod.Spec.Containers)
	}
	// The pod gets copies: changing it leaves the PodSet's template alone.
	pod.Spec.Containers[0].Image = "changed"
	pod.Annotations["note"] = "changed"
	if ps.Spec.Template.Spec.Containers[0].Image != "busybox:1.36" || ps.Spec.Template.Metadata.Annotations["note"] != "x" {
		t.Error("Pod shares memory with the PodSet's template")
	}
}
