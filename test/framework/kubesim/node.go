package kubesim

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LostNode creates the node name as the node lifecycle controller leaves a node whose kubelet
// stopped reporting ago: its Ready condition Unknown since then. The node is deleted when the
// test ends.
func LostNode(t *testing.T, c client.Client, name string, ago time.Duration) *corev1.Node {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), node) })
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
		Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.",
		LastTransitionTime: metav1.NewTime(time.Now().Add(-ago)), LastHeartbeatTime: metav1.NewTime(time.Now().Add(-ago))}}
	if err := c.Status().Update(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	return node
}

// BindPod binds the pod ns/name to node, as the scheduler does, and marks it unready, as the node
// lifecycle controller does to the pods of a lost node.
func BindPod(t *testing.T, c client.Client, ns, name, node string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := c.SubResource("binding").Create(ctx, pod, binding); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}
