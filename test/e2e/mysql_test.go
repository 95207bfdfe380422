//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func TestMySQLDeletionPolicyDelete(t *testing.T) {
	ns := newNamespace(t, "mysql-delete")
	kubectl(t, `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: orders
spec:
  database: orders
  user: orders
  deletionPolicy: Delete
`, "apply", "-n", ns, "-f", "-")
	waitMySQL(t, ns, "orders", appsv1alpha1.DefaultMySQLImage)
	for _, name := range []string{"data-orders-0", "orders-credentials"} {
		var obj client.Object = &corev1.Secret{}
		if strings.HasPrefix(name, "data-") {
			obj = &corev1.PersistentVolumeClaim{}
		}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
	}

	kubectl(t, "", "delete", "-n", ns, "mysql", "orders")
	deleted := time.Now()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		for name, obj := range map[string]client.Object{
			"data-orders-0": &corev1.PersistentVolumeClaim{}, "orders-credentials": &corev1.Secret{},
			"orders-config": &corev1.ConfigMap{}, "orders": &appsv1.StatefulSet{},
		} {
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err == nil {
				return fmt.Errorf("%T %s still there", obj, name)
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		return noneLeft(ctx, ns, &corev1.ServiceList{}, &corev1.PodList{})
	})
	t.Logf("data volume and credentials of a MySQL with deletionPolicy Delete gone %s after its deletion", time.Since(deleted).Round(time.Millisecond))
}

func TestMySQLUpgradeAndRefusedDowngrade(t *testing.T) {
	ns := newNamespace(t, "mysql-upgrade")
	kubectl(t, `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: db
spec:
  image: mysql:8.4.6
  database: app
  user: app
`, "apply", "-n", ns, "-f", "-")
	waitMySQL(t, ns, "db", "mysql:8.4.6")

	kubectl(t, "", "patch", "-n", ns, "mysql", "db", "--type=merge", "-p", `{"spec":{"image":"mysql:8.0.43"}}`)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		m := &appsv1alpha1.MySQL{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, m); err != nil {
			return err
		}
		if err := await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); c.Reason != appsv1alpha1.ReasonDowngradeRefused {
			return fmt.Errorf("Degraded reason = %s (%s), want %s", c.Reason, c.Message, appsv1alpha1.ReasonDowngradeRefused)
		}
		return nil
	})
	out := kubectl(t, "", "describe", "-n", ns, "mysql", "db")
	if !strings.Contains(out, appsv1alpha1.ReasonDowngradeRefused) {
		t.Errorf("kubectl describe shows no %s:\n%s", appsv1alpha1.ReasonDowngradeRefused, out)
	}
	// The server keeps running the version its data was written by.
	time.Sleep(2 * time.Second)
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, sts); err != nil {
		t.Fatal(err)
	}
	if image := sts.Spec.Template.Spec.Containers[0].Image; image != "mysql:8.4.6" {
		t.Errorf("statefulset image = %s after a refused downgrade, want mysql:8.4.6", image)
	}
	pod := &corev1.Pod{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db-0"}, pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Containers[0].Image != "mysql:8.4.6" || !conditions.PodReady(pod) {
		t.Errorf("pod image %s ready %t, want mysql:8.4.6 and ready", pod.Spec.Containers[0].Image, conditions.PodReady(pod))
	}

	patched := time.Now()
	kubectl(t, "", "patch", "-n", ns, "mysql", "db", "--type=merge", "-p", `{"spec":{"image":"mysql:8.4.7"}}`)
	waitMySQL(t, ns, "db", "mysql:8.4.7")
	t.Logf("upgraded from 8.4.6 to 8.4.7 in %s", time.Since(patched).Round(time.Millisecond))
	out = kubectl(t, "", "get", "-n", ns, "mysql", "db")
	if !strings.Contains(out, "mysql:8.4.7") {
		t.Errorf("kubectl get mysql:\n%s", out)
	}
}

// waitMySQL waits until the MySQL name runs image on its one pod, Running and Ready, with its data
// claim Bound, and reports it Available, done rolling out and not Degraded for its current generation.
func waitMySQL(t *testing.T, ns, name, image string) *appsv1alpha1.MySQL {
	t.Helper()
	m := &appsv1alpha1.MySQL{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return err
		}
		if m.Status.Image != image || m.Status.ReadyReplicas != 1 {
			return fmt.Errorf("MySQL %s status image %q ready %d", name, m.Status.Image, m.Status.ReadyReplicas)
		}
		for condType, status := range map[string]metav1.ConditionStatus{
			appsv1alpha1.ConditionAvailable:   metav1.ConditionTrue,
			appsv1alpha1.ConditionProgressing: metav1.ConditionFalse,
			appsv1alpha1.ConditionDegraded:    metav1.ConditionFalse,
		} {
			if err := await.ConditionIs(m.Status.Conditions, m.Generation, condType, status); err != nil {
				return fmt.Errorf("MySQL %s: %w", name, err)
			}
		}
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-0"}, pod); err != nil {
			return err
		}
		if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || !conditions.PodReady(pod) || pod.Spec.Containers[0].Image != image {
			return fmt.Errorf("pod %s phase %s ready %t image %s", pod.Name, pod.Status.Phase, conditions.PodReady(pod), pod.Spec.Containers[0].Image)
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-" + name + "-0"}, pvc); err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("claim %s is %s", pvc.Name, pvc.Status.Phase)
		}
		return nil
	})
	return m
}
