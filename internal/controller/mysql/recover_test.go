package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// startMember does what the StatefulSet controller and the kubelet would: it creates member 0 of
// the StatefulSet on revision, then gives it the waiting reason of its server container.
func startMember(t *testing.T, ns string, sts *appsv1.StatefulSet, revision, waitingReason string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{appsv1.ControllerRevisionHashLabelKey: revision}
	for k, v := range sts.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: sts.Name + "-0", Namespace: ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: container(sts).Name, Image: container(sts).Image}}},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{
		Phase:      corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: container(sts).Name, Image: container(sts).Image, State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: waitingReason, Message: "cannot start " + container(sts).Image}}}},
	}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// setRevisions writes the status of the StatefulSet as its controller would, with no member ready.
func setRevisions(t *testing.T, ns, name, current, update string) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
			return err
		}
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 1,
			CurrentReplicas: 1, CurrentRevision: current, UpdateRevision: update}
		return k8s.Status().Update(ctx, sts)
	})
}

// TestFixedSpecReplacesTheWedgedServer gives a MySQL an image that cannot be pulled, then fixes the
// spec: the StatefulSet would wait forever for the broken pod to be Ready, so the operator deletes
// it for the StatefulSet to recreate from the fixed template.
func TestFixedSpecReplacesTheWedgedServer(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Image = "mysql:8.4.6-typo" })
	childrenExist(t, ns, true)
	sts := get(t, ns, "db", &appsv1.StatefulSet{})
	setRevisions(t, ns, "db", "db-broken", "db-broken")
	broken := startMember(t, ns, sts, "db-broken", appsv1alpha1.ReasonImagePullBackOff)

	m := waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonImagePullBackOff))
	t.Logf("Degraded: %s", conditionMessage(m, appsv1alpha1.ConditionDegraded))
	// On the StatefulSet's current revision the pod is what the spec asks for: it stays.
	await.RequireUnchanged(t, "the broken pod of the current revision", func() string {
		return get(t, ns, "db-0", &corev1.Pod{}).ResourceVersion
	})

	patchSpec(t, ns, `{"spec":{"image":"mysql:8.4.6"}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if image := container(get(t, ns, "db", &appsv1.StatefulSet{})).Image; image != "mysql:8.4.6" {
			return fmt.Errorf("statefulset image = %s, want the fixed mysql:8.4.6", image)
		}
		return nil
	})
	setRevisions(t, ns, "db", "db-broken", "db-fixed")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pod := &corev1.Pod{}
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-0"}, pod)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case pod.UID != broken.UID:
			return nil
		}
		return errors.New("the broken pod is still there")
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventWedgedPodDeleted)

	// Its replacement, on the fixed revision and starting, is left alone.
	replacement := startMember(t, ns, get(t, ns, "db", &appsv1.StatefulSet{}), "db-fixed", "ContainerCreating")
	time.Sleep(time.Second)
	if got := get(t, ns, "db-0", &corev1.Pod{}); got.UID != replacement.UID {
		t.Errorf("the replacement on the current revision was deleted")
	}
}

func conditionMessage(m *appsv1alpha1.MySQL, condType string) string {
	for _, c := range m.Status.Conditions {
		if c.Type == condType {
			return c.Message
		}
	}
	return ""
}
