package kubesim

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// StartPod does what the ReplicaSet controller and the kubelet would for dep: it creates a pod
// named name from the Deployment's template as it stands and gives it a status (SetPodStatus).
func StartPod(t *testing.T, c client.Client, dep *appsv1.Deployment, name string, ready bool, waitingReason string, timeout time.Duration) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: dep.Namespace, Labels: dep.Spec.Template.Labels},
		Spec:       dep.Spec.Template.Spec,
	}
	if err := c.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	SetPodStatus(t, c, dep.Namespace, name, ready, waitingReason, timeout)
}

// SetPodStatus writes the status the kubelet would for the pod ns/name, running: ready or not,
// or with its first container waiting for waitingReason, with the kubelet's message for it.
func SetPodStatus(t *testing.T, c client.Client, ns, name string, ready bool, waitingReason string, timeout time.Duration) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pod := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return err
		}
		container := pod.Spec.Containers[0].Name
		readiness, state := corev1.ConditionFalse, corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		if ready {
			readiness = corev1.ConditionTrue
		}
		if waitingReason != "" {
			state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waitingReason, Message: waitingMessage(pod, waitingReason)}}
		}
		pod.Status = corev1.PodStatus{
			Phase:             corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: readiness, LastTransitionTime: metav1.Now()}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: container, Ready: ready, State: state}},
		}
		return c.Status().Update(ctx, pod)
	})
}

// waitingMessage is what the kubelet says of the first container of pod waiting for reason.
func waitingMessage(pod *corev1.Pod, reason string) string {
	if reason == appsv1alpha1.ReasonCrashLoopBackOff {
		return fmt.Sprintf("back-off 10s restarting failed container=%s pod=%s_%s(%s)", pod.Spec.Containers[0].Name, pod.Name, pod.Namespace, pod.UID)
	}
	return fmt.Sprintf("Back-off pulling image %q", pod.Spec.Containers[0].Image)
}

// DeletePod deletes the pod ns/name, if it is there, as the controller that made it would.
func DeletePod(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := c.Delete(context.Background(), pod); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}
