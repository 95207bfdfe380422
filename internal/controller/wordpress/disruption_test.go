package wordpress_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

// A WordPress of more than one replica has a disruption budget that lets a drain take one pod at a
// time, even before its database serves; at one replica the budget goes.
func TestDisruptionBudget(t *testing.T) {
	wp := createWordPress(t, newNamespace(t), func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Replicas = ptr.To[int32](2)
		wp.Spec.Storage.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	})
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.DisruptionBudgetProblem(ctx, k8s, wp)
	})
	if err := k8s.Patch(context.Background(), wp, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`))); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.NoDisruptionBudget(ctx, k8s, wp)
	})
}
