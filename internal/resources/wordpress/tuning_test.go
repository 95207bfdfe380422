package wordpress

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestApacheGetsTheWorkersTuningComputesOnlyInAuto(t *testing.T) {
	withMemory := func(mode appsv1alpha1.TuningMode, limit string) *appsv1alpha1.WordPress {
		return wordpress(func(wp *appsv1alpha1.WordPress) {
			wp.Spec.Tuning.Mode = mode
			if limit != "" {
				wp.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit)}
			}
		})
	}
	for _, tc := range []struct {
		name    string
		wp      *appsv1alpha1.WordPress
		args    []string
		message string
	}{
		{name: "auto", wp: withMemory(appsv1alpha1.TuningAuto, "512Mi"), args: []string{"apache2-foreground", "-c", "MaxRequestWorkers 11"}},
		{name: "recommend", wp: withMemory(appsv1alpha1.TuningRecommend, "512Mi")},
		{name: "unset mode recommends", wp: withMemory("", "512Mi")},
		{name: "no memory", wp: withMemory(appsv1alpha1.TuningAuto, ""),
			message: "spec.resources sets no memory limit or request: the server keeps its defaults"},
		{name: "too little", wp: withMemory(appsv1alpha1.TuningAuto, "100Mi"),
			message: "100Mi of memory is less than the 144Mi Apache needs for 2 workers: the server keeps its defaults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			container := Deployment(tc.wp, database(nil)).Spec.Template.Spec.Containers[0]
			if !slices.Equal(container.Args, tc.args) {
				t.Errorf("args %q, want %q", container.Args, tc.args)
			}
			status := Tuning(tc.wp)
			if status.Message != tc.message {
				t.Errorf("status.tuning.message %q, want %q", status.Message, tc.message)
			}
			if tc.message == "" && (len(status.Settings) != 1 || status.Settings[0].Value != "11" || status.WorstCase != "504Mi") {
				t.Errorf("status.tuning %+v, want 11 workers in a worst case of 504Mi", status)
			}
		})
	}
	if Tuning(withMemory(appsv1alpha1.TuningOff, "512Mi")) != nil {
		t.Error("tuning Off computes a status")
	}
}
