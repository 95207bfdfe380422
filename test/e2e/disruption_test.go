//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// drainLabel pins a test's pods to one node, whose label the test takes away so that a replacement
// cannot start: on kwok's nodes a replacement is otherwise ready within milliseconds, before a
// second eviction could be refused.
const drainLabel = "e2e.appkeeper.dev/drain"

// A drain evicts the pods of an instance one at a time: with kube-controller-manager's disruption
// controller reading the budget, a second eviction is refused until the first pod's replacement is
// ready. Bare pods count as well as a Deployment's: a PodSet is their controller through its scale
// subresource.
func TestDrainEvictsOnePodAtATime(t *testing.T) {
	for _, tt := range []struct{ kind, manifest string }{
		{"WebServer", `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata:
  name: shop
spec:
  image: nginx:1.23.1
  replicas: 2
  nodeSelector: {"` + drainLabel + `": "%s"}
`},
		{"PodSet", `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: PodSet
metadata:
  name: batch
spec:
  replicas: 2
  template:
    spec:
      nodeSelector: {"` + drainLabel + `": "%s"}
      containers:
        - name: main
          image: busybox:1.36
          command: ["sleep", "3600"]
`},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			ns := newNamespace(t, "drain")
			node := labelANode(t, ns)
			kubectl(t, fmt.Sprintf(tt.manifest, ns), "apply", "-n", ns, "-f", "-")
			pods := waitEvictable(t, ns, 2, timeout)
			setNodeLabel(t, node, nil)
			waitSchedulerSeesNoNode(t, ns)
			if err := evict(pods[0]); err != nil {
				t.Fatalf("the first eviction: %v", err)
			}
			if err := evict(pods[1]); !apierrors.IsTooManyRequests(err) {
				t.Fatalf("a second eviction while the first pod is not replaced = %v, want it refused (429)", err)
			}
			setNodeLabel(t, node, &ns)
			for _, pod := range waitEvictable(t, ns, 2, replacedWithin) {
				if pod.UID == pods[0].UID {
					t.Fatalf("pod %s was evicted and is still there", pod.Name)
				}
			}
			if err := evict(pods[1]); err != nil {
				t.Errorf("the second eviction once the first pod was replaced: %v", err)
			}
		})
	}
}

// labelANode labels a ready node with drainLabel=value and takes the label away when the test ends.
func labelANode(t *testing.T, value string) string {
	t.Helper()
	nodes := &corev1.NodeList{}
	if err := k8s.List(context.Background(), nodes); err != nil {
		t.Fatal(err)
	}
	for _, node := range nodes.Items {
		if !node.Spec.Unschedulable && len(node.Spec.Taints) == 0 && nodeReady(&node) {
			setNodeLabel(t, node.Name, &value)
			t.Cleanup(func() { setNodeLabel(t, node.Name, nil) })
			return node.Name
		}
	}
	t.Fatal("no ready node without taints")
	return ""
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// setNodeLabel sets drainLabel on node to value, or removes it when value is nil.
func setNodeLabel(t *testing.T, node string, value *string) {
	t.Helper()
	label := "null"
	if value != nil {
		label = `"` + *value + `"`
	}
	patch := []byte(`{"metadata":{"labels":{"` + drainLabel + `":` + label + `}}}`)
	if err := k8s.Patch(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// replacedWithin bounds the wait for a budget to count an evicted pod's replacement. The disruption
// controller holds an evicted pod's name as disrupted until it sees the pod go, or for 2 minutes:
// a replacement that takes the name at once, as a PodSet's does, may not count before then.
const replacedWithin = 3 * time.Minute

// waitSchedulerSeesNoNode waits until the scheduler finds no node for a pod that asks for
// drainLabel=ns: from then on, it schedules no replacement on the node whose label went. A probe
// placed by a scheduler that had not seen the label go yet is deleted, and another one asks again.
func waitSchedulerSeesNoNode(t *testing.T, ns string) {
	t.Helper()
	var probe *corev1.Pod
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if probe == nil {
			probe = &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "scheduler-probe-", Namespace: ns},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{drainLabel: ns},
					Containers:   []corev1.Container{{Name: "main", Image: "busybox:1.36"}},
				},
			}
			if err := k8s.Create(ctx, probe); err != nil {
				probe = nil
				return err
			}
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(probe), probe); err != nil {
			return err
		}
		for _, c := range probe.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return k8s.Delete(ctx, probe)
			}
		}
		if probe.Spec.NodeName != "" {
			placed := probe.Spec.NodeName
			if err := k8s.Delete(ctx, probe); err != nil {
				return err
			}
			probe = nil
			return fmt.Errorf("the scheduler placed a probe on %s before it saw the label go", placed)
		}
		return fmt.Errorf("the probe is not unschedulable yet: %+v", probe.Status.Conditions)
	})
}

// waitEvictable waits until the namespace's budget allows one disruption of its n ready pods, and
// returns those pods.
func waitEvictable(t *testing.T, ns string, n int, within time.Duration) []corev1.Pod {
	t.Helper()
	var ready []corev1.Pod
	await.Eventually(t, within, func(ctx context.Context) error {
		budgets := &policyv1.PodDisruptionBudgetList{}
		if err := k8s.List(ctx, budgets, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(budgets.Items) != 1 {
			return fmt.Errorf("%d disruption budgets, want 1", len(budgets.Items))
		}
		st := budgets.Items[0].Status
		if st.ObservedGeneration != budgets.Items[0].Generation || st.CurrentHealthy != int32(n) || st.DisruptionsAllowed != 1 {
			return fmt.Errorf("budget status: %d healthy, %d disruptions allowed", st.CurrentHealthy, st.DisruptionsAllowed)
		}
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		ready = ready[:0]
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil && conditions.PodReady(&pod) {
				ready = append(ready, pod)
			}
		}
		if len(ready) != n {
			return fmt.Errorf("%d ready pods, want %d", len(ready), n)
		}
		return nil
	})
	return ready
}

// evict asks for pod's eviction, as kubectl drain does.
func evict(pod corev1.Pod) error { return testcluster.Evict(context.Background(), k8s, &pod) }
