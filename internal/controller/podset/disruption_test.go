package podset_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

// A PodSet of more than one pod has a disruption budget that lets a drain take one pod at a time,
// and pods that prefer nodes apart, a default that is not part of the template's hash; at one pod
// the budget goes.
func TestDisruptionBudgetAndSpread(t *testing.T) {
	ns := newNamespace(t)
	ps := newPodSet(ns, 2, "busybox:1.36")
	create(t, ps)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.DisruptionBudgetProblem(ctx, k8s, ps)
	})
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pods, err := podsOf(ctx, ns)
		if err != nil || len(pods) != 2 {
			return fmt.Errorf("%d pods: %w", len(pods), err)
		}
		for name, pod := range pods {
			if err := inspect.SpreadProblem(pod.Spec.Affinity, ps.SelectorLabels()); err != nil {
				return fmt.Errorf("pod %s: %w", name, err)
			}
			if got, want := pod.Annotations[appsv1alpha1.AnnotationTemplateHash], getPodSet(t, ns).Status.TemplateHash; want != "" && got != want {
				return fmt.Errorf("pod %s has template hash %s, the PodSet %s", name, got, want)
			}
		}
		return nil
	})
	if err := k8s.Patch(context.Background(), ps, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`))); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.NoDisruptionBudget(ctx, k8s, ps)
	})
}
