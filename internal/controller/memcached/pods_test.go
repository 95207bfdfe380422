package memcached_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// TestUnschedulableMemberIsReportedThenReplacedOnceFixed asks for a member no node can take, then
// fixes the spec: the StatefulSet would wait forever for that member to be Ready, so the operator
// deletes it for the StatefulSet to recreate from the fixed template, and leaves the serving one.
func TestUnschedulableMemberIsReportedThenReplacedOnceFixed(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 2, nil)
	childrenExist(t, ns)
	runMembers(t, ns, 2)
	waitStatus(t, ns, []string{"cache-0", "cache-1"}, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	serving := get(t, ns, "cache-0", &corev1.Pod{})

	// Both members are of revision cache-1, the StatefulSet's only one so far.
	for _, name := range []string{"cache-0", "cache-1"} {
		pod := get(t, ns, name, &corev1.Pod{})
		pod.Labels[appsv1.ControllerRevisionHashLabelKey] = "cache-1"
		if err := k8s.Update(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	// The scheduler's verdict on member 1.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache-1"}, pod); err != nil {
			return err
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/3 nodes are available: 3 Insufficient memory."},
		}}
		return k8s.Status().Update(ctx, pod)
	})
	mc := waitStatus(t, ns, []string{"cache-0"}, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue)
	c := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionDegraded)
	if c.Reason != appsv1alpha1.ReasonUnschedulable || !strings.HasPrefix(c.Message, "pod cache-1: Unschedulable: 0/3 nodes") {
		t.Errorf("Degraded = %s: %s, want Unschedulable naming cache-1", c.Reason, c.Message)
	}

	// The fix: the StatefulSet controller sees the new template as revision cache-2.
	mc = get(t, ns, "cache", &appsv1alpha1.Memcached{})
	mc.Spec.Image = "memcached:1.6.39-alpine"
	if err := k8s.Update(context.Background(), mc); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, sts); err != nil {
			return err
		}
		if sts.Spec.Template.Spec.Containers[0].Image != "memcached:1.6.39-alpine" {
			return fmt.Errorf("statefulset image = %s", sts.Spec.Template.Spec.Containers[0].Image)
		}
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1,
			CurrentReplicas: 2, CurrentRevision: "cache-1", UpdateRevision: "cache-2"}
		return k8s.Status().Update(ctx, sts)
	})
	await.Eventually(t, timeout, func(ctx context.Context) error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache-1"}, &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return errors.New("the unschedulable member of the old revision is still there")
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventWedgedPodDeleted)
	if got := get(t, ns, "cache-0", &corev1.Pod{}); got.UID != serving.UID {
		t.Errorf("the Ready member cache-0 was replaced")
	}
}
