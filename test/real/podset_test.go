//go:build real

package real

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func TestPodSetRunsItsCommandAndRestartsKilledContainers(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "pset", restricted)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: PodSet
metadata:
  name: workers
spec:
  replicas: 2
  template:
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        seccompProfile: {type: RuntimeDefault}
      terminationGracePeriodSeconds: 1
      containers:
        - name: main
          image: %s
          command: ["sh", "-c", "echo started by $(id -u) > /tmp/marker && exec sleep 3600"]
          securityContext:
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
`, busyboxImage), "apply", "-n", ns, "-f", "-")
	took := waitAvailable(t, ns, "PodSet", "workers", created)
	ps := &appsv1alpha1.PodSet{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "workers"}, ps); err != nil {
		t.Fatal(err)
	}
	pods := waitPods(t, ns, ps.SelectorLabels(), 2, busyboxImage)
	t.Logf("pod start latency: PodSet of 2 pods Available %s after it was created", took)

	for _, pod := range pods {
		if out := execIn(t, ns, pod.Name, "cat", "/tmp/marker"); strings.TrimSpace(out) != "started by 65534" {
			t.Errorf("pod %s's marker: %q, want the line its command wrote", pod.Name, out)
		}
	}

	victim := pods[0]
	restarts := restartCount(&victim)
	killed := time.Now()
	killMainProcess(t, &victim)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(&victim), pod); err != nil {
			return err
		}
		if pod.UID != victim.UID {
			return fmt.Errorf("pod %s was replaced, want its container restarted", pod.Name)
		}
		if restartCount(pod) <= restarts {
			return fmt.Errorf("pod %s restarted %d times, want more than %d", pod.Name, restartCount(pod), restarts)
		}
		return podServing(pod, busyboxImage)
	})
	t.Logf("killed container of pod %s restarted and Ready %s after the kill", victim.Name, time.Since(killed).Round(time.Millisecond))
	waitAvailable(t, ns, "PodSet", "workers", killed)
	if out := execIn(t, ns, victim.Name, "cat", "/tmp/marker"); strings.TrimSpace(out) != "started by 65534" {
		t.Errorf("pod %s's marker after the restart: %q", victim.Name, out)
	}

	// Exactly the replicas asked for, the same pods as before.
	after := waitPods(t, ns, ps.SelectorLabels(), 2, busyboxImage)
	for i := range after {
		if after[i].UID != pods[0].UID && after[i].UID != pods[1].UID {
			t.Errorf("pod %s is new, want the PodSet's two pods kept", after[i].Name)
		}
	}
}

func TestPodsGoToTheFakeNodesOnRequest(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "fake", restricted)
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = "simulated", ns
	pod.Spec = corev1.PodSpec{
		NodeSelector:    map[string]string{"type": "kwok"},
		Tolerations:     []corev1.Toleration{{Key: localcluster.FakeNodeTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		SecurityContext: restrictedPodAs(65534),
		Containers: []corev1.Container{{
			Name: "main", Image: busyboxImage, Command: []string{"sleep", "3600"},
			SecurityContext: parts.RestrictedSecurityContext(),
		}},
	}
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		if pod.Spec.NodeName == "" || pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod on node %q is %s", pod.Spec.NodeName, pod.Status.Phase)
		}
		return nil
	})
	node := &corev1.Node{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
		t.Fatal(err)
	}
	if node.Labels["type"] != "kwok" {
		t.Errorf("pod runs on %s, labelled type=%q, want a kwok node", node.Name, node.Labels["type"])
	}
}

// The namespaces of these scenarios hold the operand pods to a pod security standard: a pod that
// breaks it must be refused, or the scenarios would prove nothing about it.
func TestNamespacesEnforcePodSecurity(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "psa", restricted)
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = "as-root", ns
	pod.Spec.Containers = []corev1.Container{{Name: "main", Image: busyboxImage, Command: []string{"sleep", "3600"}}}
	err := k8s.Create(context.Background(), pod)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Errorf("create a pod that breaks the restricted standard = %v, want Forbidden by PodSecurity", err)
	}
}
