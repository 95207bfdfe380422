package memcached_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// TestMemoryAboveTheLimitIsReported checks that a memoryMB above the memory limit, which memcached
// would grow into until the kubelet kills it, starts no member and says which fields disagree.
func TestMemoryAboveTheLimitIsReported(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 1, func(mc *appsv1alpha1.Memcached) {
		mc.Spec.MemoryMB = ptr.To[int32](512)
		mc.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
	})
	await.Eventually(t, timeout, func(ctx context.Context) error {
		mc := &appsv1alpha1.Memcached{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
			return err
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionDegraded)
		if c == nil || c.Reason != appsv1alpha1.ReasonInvalidSpec || !strings.Contains(c.Message, "spec.memoryMB") {
			return fmt.Errorf("Degraded = %+v, want InvalidSpec naming spec.memoryMB", c)
		}
		return nil
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.ReasonInvalidSpec)
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cache"}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get StatefulSet = %v, want NotFound while memoryMB is above the limit", err)
	}

	mc := &appsv1alpha1.Memcached{}
	mc.Name, mc.Namespace = "cache", ns
	if err := k8s.Patch(context.Background(), mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"memoryMB":200}}`))); err != nil {
		t.Fatal(err)
	}
	childrenExist(t, ns)
}
