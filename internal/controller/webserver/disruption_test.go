package webserver_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

// A WebServer of more than one replica has a disruption budget that lets a drain take one pod at a
// time, and pods that prefer nodes apart; at one replica the budget goes, and a user's affinity
// replaces the preference.
func TestDisruptionBudgetAndSpread(t *testing.T) {
	ns := newNamespace(t)
	ws := createWebServer(t, ns, 2, "nginx:1.23.1")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.DisruptionBudgetProblem(ctx, k8s, ws)
	})
	dep, _ := childrenExist(t, ns)
	if err := inspect.SpreadProblem(dep.Spec.Template.Spec.Affinity, ws.SelectorLabels()); err != nil {
		t.Error(err)
	}

	patch := client.MergeFrom(ws.DeepCopy())
	ws.Spec.Replicas = ptr.To[int32](1)
	own := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
		Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}},
	}}}}
	ws.Spec.Affinity = own
	if err := k8s.Patch(context.Background(), ws, patch); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.NoDisruptionBudget(ctx, k8s, ws)
	})
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			return err
		}
		if got := dep.Spec.Template.Spec.Affinity; got == nil || got.PodAntiAffinity != nil || got.NodeAffinity == nil {
			return fmt.Errorf("the pods' affinity is %+v, want the WebServer's own", got)
		}
		return nil
	})
}
