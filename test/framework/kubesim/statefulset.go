package kubesim

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
)

// RunStatefulSet does what the StatefulSet controller, the volume provisioner and the kubelet would
// for a one-member StatefulSet: it creates the member's PVC from the claim template, binds it, and
// writes the status of a StatefulSet whose member runs the current template and is ready.
func RunStatefulSet(t *testing.T, c client.Client, ns, name string, timeout time.Duration) {
	t.Helper()
	ctx := context.Background()
	sts := &appsv1.StatefulSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
		t.Fatal(err)
	}
	tmpl := sts.Spec.VolumeClaimTemplates[0]
	claim := client.ObjectKey{Namespace: ns, Name: tmpl.Name + "-" + name + "-0"}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim.Name, Namespace: ns, Labels: tmpl.Labels},
		Spec:       tmpl.Spec,
	}
	if err := c.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := c.Get(ctx, claim, pvc); err != nil {
			return err
		}
		if pvc.Status.Phase == corev1.ClaimBound {
			return nil
		}
		pvc.Status.Phase = corev1.ClaimBound
		return c.Status().Update(ctx, pvc)
	})
	MarkStatefulSetReady(t, c, ns, name, timeout)
}

// MarkStatefulSetReady writes the status of a StatefulSet whose one member runs the current
// template and is ready.
func MarkStatefulSetReady(t *testing.T, c client.Client, ns, name string, timeout time.Duration) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
			return err
		}
		revision := fmt.Sprintf("%s-%d", name, sts.Generation)
		sts.Status = appsv1.StatefulSetStatus{
			ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1,
			CurrentReplicas: 1, CurrentRevision: revision, UpdateRevision: revision,
		}
		return c.Status().Update(ctx, sts)
	})
}
