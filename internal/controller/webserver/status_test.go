package webserver

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// deployment is a Deployment observed with the given image and replica counts.
func deployment(image string, spec, replicas, updated, available int32, conditions ...appsv1.DeploymentCondition) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(spec),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: image}}}},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: available, AvailableReplicas: available, Conditions: conditions,
		},
	}
}

func TestComputeStatus(t *testing.T) {
	type want struct {
		available, progressing, degraded string // reasons; prefix "+" means status True, "?" Unknown
		image                            string
	}
	tests := []struct {
		name        string
		replicas    int32
		statusImage string
		dep         *appsv1.Deployment
		err         error
		want        want
	}{
		{"no deployment yet", 3, "", nil, nil,
			want{"Creating", "+Creating", "AsExpected", ""}},
		{"pods starting", 3, "", deployment("nginx:1.23.1", 3, 3, 3, 1), nil,
			want{"ReplicasNotReady", "+Scaling", "AsExpected", ""}},
		{"all ready", 3, "", deployment("nginx:1.23.1", 3, 3, 3, 3), nil,
			want{"+AsExpected", "RolloutComplete", "AsExpected", "nginx:1.23.1"}},
		{"scaling up before ever being Available", 4, "nginx:1.23.1", deployment("nginx:1.23.1", 3, 3, 3, 3), nil,
			want{"ReplicasNotReady", "+Scaling", "AsExpected", "nginx:1.23.1"}},
		{"rolling out keeps the old image in status", 3, "nginx:1.23.0", deployment("nginx:1.23.1", 3, 4, 1, 3), nil,
			want{"+AsExpected", "+RollingOut", "AsExpected", "nginx:1.23.0"}},
		{"deployment not yet changed to the new image", 3, "nginx:1.23.0", deployment("nginx:1.23.0", 3, 3, 3, 3), nil,
			want{"+AsExpected", "+RollingOut", "AsExpected", "nginx:1.23.0"}},
		{"scaled to zero", 0, "nginx:1.23.1", deployment("nginx:1.23.1", 0, 0, 0, 0), nil,
			want{"ScaledToZero", "RolloutComplete", "AsExpected", "nginx:1.23.1"}},
		{"stuck rollout", 3, "nginx:1.23.0", deployment("nginx:1.23.1", 3, 4, 1, 3, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}), nil,
			want{"+AsExpected", "+RollingOut", "+ProgressDeadlineExceeded", "nginx:1.23.0"}},
		{"apply failed, Deployment unobserved", 3, "", nil, errors.New("provided port is already allocated"),
			want{"?ReadFailed", "?ReadFailed", "+ReconcileFailed", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &appsv1alpha1.WebServer{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 7},
				Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To(tt.replicas), Image: "nginx:1.23.1"},
				Status:     appsv1alpha1.WebServerStatus{Image: tt.statusImage},
			}
			got := computeStatus(ws, rollout.Decision{}, tt.dep, nil, nil, nil, tt.err)
			if got.ObservedGeneration != 7 || got.Image != tt.want.image {
				t.Errorf("observedGeneration/image = %d/%q, want 7/%q", got.ObservedGeneration, got.Image, tt.want.image)
			}
			if got.Selector != "app.kubernetes.io/instance=web,app.kubernetes.io/name=webserver" {
				t.Errorf("selector = %q", got.Selector)
			}
			checkConditions(t, got.Conditions, 7, tt.want.available, tt.want.progressing, tt.want.degraded)
		})
	}
}

// checkConditions checks Available, Progressing and Degraded against reasons prefixed "+" for
// True, "?" for Unknown and nothing for False.
func checkConditions(t *testing.T, conditions []metav1.Condition, generation int64, available, progressing, degraded string) {
	t.Helper()
	for condType, reason := range map[string]string{
		appsv1alpha1.ConditionAvailable:   available,
		appsv1alpha1.ConditionProgressing: progressing,
		appsv1alpha1.ConditionDegraded:    degraded,
	} {
		c := meta.FindStatusCondition(conditions, condType)
		wantStatus := metav1.ConditionFalse
		switch reason[0] {
		case '+':
			wantStatus, reason = metav1.ConditionTrue, reason[1:]
		case '?':
			wantStatus, reason = metav1.ConditionUnknown, reason[1:]
		}
		if c == nil || c.Status != wantStatus || c.Reason != reason || c.ObservedGeneration != generation {
			t.Errorf("%s = %+v, want %s/%s", condType, c, wantStatus, reason)
		}
	}
}

func TestComputeStatusIsStable(t *testing.T) {
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1},
		Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To[int32](2), Image: "nginx:1.23.1"},
	}
	dep := deployment("nginx:1.23.1", 2, 2, 2, 2)
	ws.Status = computeStatus(ws, rollout.Decision{}, dep, nil, nil, nil, nil)
	again := computeStatus(ws, rollout.Decision{}, dep, nil, nil, nil, nil)
	if !equalStatus(ws.Status, again) {
		t.Errorf("a second pass over the same observation changed the status:\n%+v\n%+v", ws.Status, again)
	}
}

func equalStatus(a, b appsv1alpha1.WebServerStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}
