package mysql_test

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
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

func TestDowngradeIsRefusedAndUpgradeRolls(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Image = "mysql:8.4.6" })
	childrenExist(t, ns, true)
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)

	patchSpec(t, ns, `{"spec":{"image":"mysql:8.0.43"}}`)
	m := waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonDowngradeRefused))
	if c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); !strings.Contains(c.Message, "spec.image") {
		t.Errorf("Degraded message = %q, want it to name spec.image", c.Message)
	}
	if err := await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue); err != nil {
		t.Errorf("the server still runs 8.4.6: %v", err)
	}
	if m.Status.Image != "mysql:8.4.6" {
		t.Errorf("status.image = %s, want mysql:8.4.6", m.Status.Image)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.ReasonDowngradeRefused)
	for range 3 {
		if image := container(get(t, ns, "db", &appsv1.StatefulSet{})).Image; image != "mysql:8.4.6" {
			t.Fatalf("statefulset image = %s after a refused downgrade, want mysql:8.4.6", image)
		}
		time.Sleep(500 * time.Millisecond)
	}

	for _, image := range []string{"mysql:8.4.7", "mysql:9.1"} {
		patchSpec(t, ns, fmt.Sprintf(`{"spec":{"image":%q}}`, image))
		await.Eventually(t, timeout, func(context.Context) error {
			if got := container(get(t, ns, "db", &appsv1.StatefulSet{})).Image; got != image {
				return fmt.Errorf("statefulset image = %s, want %s", got, image)
			}
			return nil
		})
		waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, func(m *appsv1alpha1.MySQL) error {
			if m.Status.Image == image {
				return fmt.Errorf("status.image is %s before the rollout completed", image)
			}
			return await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse)
		})
		markStatefulSetReady(t, ns, "db")
		waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, func(m *appsv1alpha1.MySQL) error {
			if m.Status.Image != image {
				return fmt.Errorf("status.image = %s, want %s", m.Status.Image, image)
			}
			return nil
		})
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventUpgrading, appsv1alpha1.EventUpgraded)
}

func TestDataVolumeRemembersTheNewestServer(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Image = "mysql:8.4.6" })
	childrenExist(t, ns, true)
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)
	await.Eventually(t, timeout, func(context.Context) error {
		if got := get(t, ns, "data-db-0", &corev1.PersistentVolumeClaim{}).Annotations[resources.DataImageAnnotation]; got != "mysql:8.4.6" {
			return fmt.Errorf("data volume records %q, want mysql:8.4.6", got)
		}
		return nil
	})

	// Deleted with the Retain policy and created again with an older version on the same volume:
	// no StatefulSet may start 8.0 on data files 8.4 has written.
	kubesim.DeleteAndCollectGarbage(t, k8s, get(t, ns, "db", &appsv1alpha1.MySQL{}), timeout)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Image = "mysql:8.0.43" })
	m := waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonDowngradeRefused))
	if c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); !strings.Contains(c.Message, "mysql:8.4.6") {
		t.Errorf("Degraded message = %q, want it to name the version the data was written by", c.Message)
	}
	for range 3 {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &appsv1.StatefulSet{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("a StatefulSet exists for a refused downgrade: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestUnversionedTagKeepsTheRecordedVersion checks that a move to a tag that names no version
// neither erases the version the data volume records nor opens the way to a later downgrade.
func TestUnversionedTagKeepsTheRecordedVersion(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Image = "mysql:8.4.6" })
	childrenExist(t, ns, true)
	runServer(t, ns, "db")
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, nil)
	recorded := func(context.Context) error {
		if got := get(t, ns, "data-db-0", &corev1.PersistentVolumeClaim{}).Annotations[resources.DataImageAnnotation]; got != "mysql:8.4.6" {
			return fmt.Errorf("data volume records %q, want mysql:8.4.6", got)
		}
		return nil
	}
	await.Eventually(t, timeout, recorded)

	// The guard cannot tell what latest is, so it lets it roll, and says so.
	patchSpec(t, ns, `{"spec":{"image":"mysql:latest"}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if got := container(get(t, ns, "db", &appsv1.StatefulSet{})).Image; got != "mysql:latest" {
			return fmt.Errorf("statefulset image = %s, want mysql:latest", got)
		}
		return nil
	})
	markStatefulSetReady(t, ns, "db")
	m := waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, func(m *appsv1alpha1.MySQL) error {
		if m.Status.Image != "mysql:latest" {
			return fmt.Errorf("status.image = %s, want mysql:latest", m.Status.Image)
		}
		return nil
	})
	if msg := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionProgressing).Message; !strings.Contains(msg, "names no version") ||
		!strings.Contains(msg, "mysql:8.4.6") {
		t.Errorf("Progressing message = %q, want it to say the guard cannot check mysql:latest against mysql:8.4.6", msg)
	}
	for range 3 {
		if err := recorded(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}

	// The record still holds the server to 8.4.
	patchSpec(t, ns, `{"spec":{"image":"mysql:8.0.40"}}`)
	m = waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonDowngradeRefused))
	if msg := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded).Message; !strings.Contains(msg, "mysql:8.4.6") {
		t.Errorf("Degraded message = %q, want it to name the recorded mysql:8.4.6", msg)
	}
	if got := container(get(t, ns, "db", &appsv1.StatefulSet{})).Image; got != "mysql:latest" {
		t.Errorf("statefulset image = %s after a refused downgrade, want mysql:latest", got)
	}
}
