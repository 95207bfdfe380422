package webserver

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// becameAvailable is when the WebServer of these tests last turned Available.
var becameAvailable = metav1.NewTime(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))

// pod is a pod of the WebServer created minutes after becameAvailable (negative: before it).
func pod(name string, minutes int, ready bool) corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(becameAvailable.Add(time.Duration(minutes) * time.Minute))},
		Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func pullingFails(p corev1.Pod) corev1.Pod {
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "nginx", State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "nginx:nope"`}}}}
	return p
}

func TestComputeStatusFromPods(t *testing.T) {
	wasAvailable := []metav1.Condition{{Type: appsv1alpha1.ConditionAvailable, Status: metav1.ConditionTrue,
		Reason: appsv1alpha1.ReasonAsExpected, LastTransitionTime: becameAvailable, ObservedGeneration: 7}}
	healthy3 := []corev1.Pod{pod("web-a", -5, true), pod("web-b", -5, true), pod("web-c", -5, true)}
	tests := []struct {
		name                             string
		replicas                         int32
		previous                         []metav1.Condition
		pods                             []corev1.Pod
		podsErr                          error
		available, progressing, degraded string
		degradedMessage                  string
	}{
		{
			name: "scaling a healthy WebServer from 3 to 5 keeps it Available", replicas: 5, previous: wasAvailable,
			pods:      append(healthy3, pod("web-d", 1, false), pod("web-e", 1, false)),
			available: "+AsExpected", progressing: "+Scaling", degraded: "AsExpected",
		},
		{
			name: "a pod that served and stopped is lost capacity", replicas: 3, previous: wasAvailable,
			pods:      []corev1.Pod{pod("web-a", -5, true), pod("web-b", -5, true), pod("web-c", -5, false)},
			available: "ReplicasNotReady", progressing: "+Scaling", degraded: "AsExpected",
		},
		{
			name: "new pods that cannot pull their image: still serving, and Degraded", replicas: 5, previous: wasAvailable,
			pods:      append(healthy3, pullingFails(pod("web-d", 1, false)), pod("web-e", 1, false)),
			available: "+AsExpected", progressing: "+Scaling", degraded: "+ImagePullBackOff",
			degradedMessage: `pod web-d: container nginx: ImagePullBackOff: Back-off pulling image "nginx:nope"`,
		},
		{
			name: "pods that could not be read leave Degraded unknown", replicas: 3, previous: wasAvailable,
			pods: healthy3, podsErr: errors.New("cache not started"),
			available: "+AsExpected", progressing: "RolloutComplete", degraded: "?ReadFailed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &appsv1alpha1.WebServer{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 7},
				Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To(tt.replicas), Image: "nginx:1.23.1"},
				Status:     appsv1alpha1.WebServerStatus{Image: "nginx:1.23.1", Conditions: tt.previous},
			}
			var ready int32
			for i := range tt.pods {
				if tt.pods[i].Status.Conditions[0].Status == corev1.ConditionTrue {
					ready++
				}
			}
			dep := deployment("nginx:1.23.1", tt.replicas, int32(len(tt.pods)), int32(len(tt.pods)), ready)
			got := computeStatus(ws, rollout.Decision{}, dep, tt.pods, nil, tt.podsErr, nil)
			checkConditions(t, got.Conditions, 7, tt.available, tt.progressing, tt.degraded)
			if tt.degradedMessage != "" {
				for _, c := range got.Conditions {
					if c.Type == appsv1alpha1.ConditionDegraded && c.Message != tt.degradedMessage {
						t.Errorf("Degraded message = %q, want %q", c.Message, tt.degradedMessage)
					}
				}
			}
		})
	}
}
