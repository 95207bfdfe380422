//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func TestMemcachedLifecycle(t *testing.T) {
	ns := newNamespace(t, "mc")
	// The default pod template must pass the restricted pod security standard: with it enforced,
	// the StatefulSet controller could create no member otherwise.
	kubectl(t, "", "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted")
	kubectl(t, `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: Memcached
metadata:
  name: cache
spec:
  size: 3
  resources:
    limits:
      memory: 128Mi
`, "apply", "-n", ns, "-f", "-")

	waitMemcached(t, ns, 3)
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cache"}, sts); err != nil {
		t.Fatal(err)
	}
	if args := sts.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "102") {
		t.Errorf("args = %q, want -m 102 for a 128Mi limit", args)
	}

	patched := time.Now()
	kubectl(t, "", "patch", "-n", ns, "memcached", "cache", "--type=merge", "-p", `{"spec":{"size":5}}`)
	waitMemcached(t, ns, 5)
	t.Logf("scaled from 3 to 5 members, all in status.nodes and Available, in %s", time.Since(patched).Round(time.Millisecond))

	out := kubectl(t, "", "get", "-n", ns, "appkeeper")
	if !strings.Contains(out, "cache") || !strings.Contains(out, appsv1alpha1.DefaultMemcachedImage) {
		t.Errorf("kubectl get appkeeper:\n%s", out)
	}

	kubectl(t, "", "scale", "-n", ns, "mc/cache", "--replicas=0")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		mc := &appsv1alpha1.Memcached{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
			return err
		}
		if err := await.ConditionIs(mc.Status.Conditions, mc.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionAvailable); c.Reason != appsv1alpha1.ReasonScaledToZero {
			return fmt.Errorf("Available reason = %s, want %s", c.Reason, appsv1alpha1.ReasonScaledToZero)
		}
		if len(mc.Status.Nodes) > 0 || mc.Status.Size != 0 {
			return fmt.Errorf("status size %d nodes %q", mc.Status.Size, mc.Status.Nodes)
		}
		return noneLeft(ctx, ns, &corev1.PodList{})
	})

	kubectl(t, "", "delete", "-n", ns, "memcached", "cache")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return noneLeft(ctx, ns, &appsv1.StatefulSetList{}, &corev1.ServiceList{}, &corev1.PodList{})
	})
}

// noneLeft returns an error while any of the lists has items in ns.
func noneLeft(ctx context.Context, ns string, lists ...client.ObjectList) error {
	for _, list := range lists {
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if n := meta.LenList(list); n > 0 {
			return fmt.Errorf("%d %T items left", n, list)
		}
	}
	return nil
}

// waitMemcached waits until the Memcached cache has exactly size member pods Running and Ready,
// lists exactly their names in status.nodes and reports Available=True for its current generation.
func waitMemcached(t *testing.T, ns string, size int) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		mc := &appsv1alpha1.Memcached{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
			return err
		}
		if err := await.ConditionIs(mc.Status.Conditions, mc.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue); err != nil {
			return err
		}
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(mc.SelectorLabels())); err != nil {
			return err
		}
		var ready []string
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && conditions.PodReady(&pod) {
				ready = append(ready, pod.Name)
			}
		}
		want := make([]string, size)
		for i := range want {
			want[i] = fmt.Sprintf("cache-%d", i)
		}
		slices.Sort(ready)
		if len(pods.Items) != size || !slices.Equal(ready, sortedCopy(want)) {
			return fmt.Errorf("%d pods, ready %q, want %q", len(pods.Items), ready, want)
		}
		if !slices.Equal(mc.Status.Nodes, want) || int(mc.Status.ReadyReplicas) != size {
			return fmt.Errorf("status nodes %q ready %d, want %q", mc.Status.Nodes, mc.Status.ReadyReplicas, want)
		}
		return nil
	})
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
