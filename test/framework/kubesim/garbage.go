package kubesim

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
)

// DeleteAndCollectGarbage deletes obj and then does what the garbage collector, which the controller
// tests run without, would: it deletes the children obj controlled. It deletes them again until they
// stay gone for a second, since a pass of obj that was already under way may apply one once more.
func DeleteAndCollectGarbage(t *testing.T, c client.Client, obj client.Object, timeout time.Duration) {
	t.Helper()
	if err := c.Delete(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(obj)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := c.Get(ctx, key, obj); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s still there: %w", key, err)
		}
		return nil
	})
	quiet := 0
	await.Eventually(t, timeout, func(ctx context.Context) error {
		deleted, err := deleteChildren(ctx, c, key.Namespace, obj.GetUID())
		if err != nil || deleted > 0 {
			quiet = 0
			return fmt.Errorf("deleted %d children of %s: %w", deleted, key, err)
		}
		if quiet++; quiet < 40 {
			return errors.New("children may still come back")
		}
		return nil
	})
}

// deleteChildren deletes the objects in namespace that the owner with uid controls.
func deleteChildren(ctx context.Context, c client.Client, namespace string, uid types.UID) (int, error) {
	deleted := 0
	for _, list := range []client.ObjectList{
		&appsv1.StatefulSetList{}, &appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{},
		&corev1.SecretList{}, &corev1.PersistentVolumeClaimList{},
	} {
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return deleted, err
		}
		err := meta.EachListItem(list, func(o runtime.Object) error {
			child := o.(client.Object)
			if ref := metav1.GetControllerOf(child); ref == nil || ref.UID != uid {
				return nil
			}
			deleted++
			return client.IgnoreNotFound(c.Delete(ctx, child))
		})
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}
