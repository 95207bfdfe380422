package webserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

// startPod does what the ReplicaSet controller and the kubelet would: it creates a pod of the
// WebServer's Deployment and gives it a status, ready or waiting for waitingReason.
func startPod(t *testing.T, ns, name string, ready bool, waitingReason string) {
	t.Helper()
	kubesim.StartPod(t, k8s, get(t, ns, "web", &appsv1.Deployment{}), name, ready, waitingReason, timeout)
}

func setPodStatus(t *testing.T, ns, name string, ready bool, waitingReason string) {
	t.Helper()
	kubesim.SetPodStatus(t, k8s, ns, name, ready, waitingReason, timeout)
}

func TestPodThatCannotPullItsImageMakesItDegraded(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 1, "nginx:1.23.1-typo")
	childrenExist(t, ns)
	startPod(t, ns, "web-5d8f-x1", false, appsv1alpha1.ReasonImagePullBackOff)
	await.Eventually(t, timeout, func(context.Context) error {
		ws := get(t, ns, "web", &appsv1alpha1.WebServer{})
		if err := await.ConditionIs(ws.Status.Conditions, ws.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
			return err
		}
		c := meta.FindStatusCondition(ws.Status.Conditions, appsv1alpha1.ConditionDegraded)
		if c.Reason != appsv1alpha1.ReasonImagePullBackOff || !strings.HasPrefix(c.Message, "pod web-5d8f-x1: container nginx: ImagePullBackOff: ") {
			return fmt.Errorf("Degraded = %s: %s, want ImagePullBackOff naming the pod and container", c.Reason, c.Message)
		}
		return nil
	})

	// The image pulls after all: the problem goes from the status with the next pod update.
	setPodStatus(t, ns, "web-5d8f-x1", true, "")
	waitCondition(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse)
}

func TestScalingUpKeepsAvailable(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 3, "nginx:1.23.1")
	childrenExist(t, ns)
	for i := range 3 {
		startPod(t, ns, fmt.Sprintf("web-old-%d", i), true, "")
	}
	markDeploymentReady(t, ns)
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	time.Sleep(time.Second) // the new pods are created a clock second after Available turned True

	patchSpec(t, ns, `{"spec":{"replicas":5}}`)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 5 {
			return fmt.Errorf("deployment replicas = %d, want 5", *dep.Spec.Replicas)
		}
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 5, UpdatedReplicas: 5, ReadyReplicas: 3, AvailableReplicas: 3}
		return k8s.Status().Update(ctx, dep)
	})
	startPod(t, ns, "web-new-3", false, "")
	startPod(t, ns, "web-new-4", false, "")
	await.Eventually(t, timeout, func(context.Context) error {
		ws := get(t, ns, "web", &appsv1alpha1.WebServer{})
		if ws.Status.Replicas != 5 {
			return fmt.Errorf("status.replicas = %d, want 5", ws.Status.Replicas)
		}
		return await.ConditionIs(ws.Status.Conditions, ws.Generation, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue)
	})
	for range 3 {
		ws := get(t, ns, "web", &appsv1alpha1.WebServer{})
		if err := await.ConditionIs(ws.Status.Conditions, ws.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue); err != nil {
			t.Fatalf("while scaling from 3 to 5 with 3 serving: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
