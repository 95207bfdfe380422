package memcached_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
)

// TestMembersADeletedStatefulSetLeftGoForTheNewOne deletes a Memcached's StatefulSet, whose
// members the garbage collector has not removed yet (envtest runs none): the operator deletes the
// members that still name the old one, which would hold their names from the new one, then makes
// the StatefulSet again. A pod of the same labels that names no controller is left alone.
func TestMembersADeletedStatefulSetLeftGoForTheNewOne(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 2, nil)
	childrenExist(t, ns)
	runMembers(t, ns, 2)
	old := get(t, ns, "cache", &appsv1.StatefulSet{})
	adopted := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cache-2", Namespace: ns, Labels: old.Spec.Template.Labels}, Spec: old.Spec.Template.Spec}
	if err := k8s.Create(context.Background(), adopted); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, sts); err != nil {
			return err
		}
		if sts.UID == old.UID {
			return fmt.Errorf("the StatefulSet is the old one still")
		}
		for _, name := range []string{"cache-0", "cache-1"} {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Pod{})
			if err == nil {
				return fmt.Errorf("pod %s of the deleted StatefulSet is still there", name)
			}
			if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
	if got := get(t, ns, "cache-2", &corev1.Pod{}); got.UID != adopted.UID || got.DeletionTimestamp != nil {
		t.Errorf("the pod that names no controller was deleted")
	}
}
