package wordpress_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

// TestASiteAndItsDatabaseOfTheSameNameDoNotFight checks that a WordPress on a MySQL of its own
// name leaves the MySQL's Service to it, says why, and that neither writes while they wait.
func TestASiteAndItsDatabaseOfTheSameNameDoNotFight(t *testing.T) {
	ns := newNamespace(t)
	createMySQL(t, ns, "blog", "wordpress", "wordpress")
	runMySQL(t, ns, "blog")
	db := &appsv1alpha1.MySQL{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := exists(ctx, ns, "blog", db); err != nil {
			return err
		}
		return await.ConditionIs(db.Status.Conditions, db.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	})
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Database = appsv1alpha1.WordPressDatabase{MySQLRef: &appsv1alpha1.LocalObjectReference{Name: "blog"}}
	})

	wp := waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonNameConflict)
	if msg := conditionMessage(wp, appsv1alpha1.ConditionDegraded); !strings.Contains(msg, "Service blog") || !strings.Contains(msg, "MySQL blog") {
		t.Errorf("Degraded message %q does not name the Service and the MySQL that controls it", msg)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventNameConflict)
	passes := testenv.SettledReconciles(t, "wordpress")
	await.RequireUnchanged(t, "the Service, the MySQL and the WordPress", func() string {
		svc := get(t, ns, "blog", &corev1.Service{})
		if !metav1.IsControlledBy(svc, db) {
			t.Fatalf("the MySQL's Service is controlled by %v", metav1.GetControllerOf(svc))
		}
		return svc.ResourceVersion + "/" + get(t, ns, "blog", &appsv1alpha1.MySQL{}).ResourceVersion + "/" +
			get(t, ns, "blog", &appsv1alpha1.WordPress{}).ResourceVersion
	})
	// The Service's deletion would start a pass: nothing retries in the meantime.
	if after := testenv.Reconciles(t, "wordpress"); after != passes {
		t.Errorf("%v WordPress passes while it waited for the Service's name, want none", after-passes)
	}
}
