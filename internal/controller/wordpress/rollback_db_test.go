package wordpress_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// stopMySQL does what the StatefulSet controller would once the one member of the MySQL name is
// no longer ready.
func stopMySQL(t *testing.T, ns, name string) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := exists(ctx, ns, name, sts); err != nil {
			return err
		}
		sts.Status.ReadyReplicas, sts.Status.AvailableReplicas = 0, 0
		return k8s.Status().Update(ctx, sts)
	})
}

// TestDatabaseAwayHoldsTheDeadline checks that a site does not roll back because its database is
// away: its pods cannot turn ready without it, whatever their revision.
func TestDatabaseAwayHoldsTheDeadline(t *testing.T) {
	ns := newNamespace(t)
	good := firstRollout(t, ns, appsv1alpha1.UpgradePolicy{ProgressDeadlineSeconds: ptr.To[int32](10)})
	next := newRevision(t, ns, `{"spec":{"image":"wordpress:6.9.1-php8.3-apache"}}`, good)
	startPod(t, ns, "blog-b-0", false, "")
	stopMySQL(t, ns, "blog-mysql")
	waitWordPress(t, ns, appsv1alpha1.ConditionDatabaseReady, metav1.ConditionFalse, appsv1alpha1.ReasonWaitingForDatabase)

	// Well past the deadline, the site still waits for its database.
	time.Sleep(12 * time.Second)
	if st := get(t, ns, "blog", &appsv1alpha1.WordPress{}).Status.Rollout; st.Failed != nil || st.Rollbacks != 0 || st.CurrentRevision != next {
		t.Fatalf("rollout %+v while the database is away, want revision %s applied and no rollback", st, next)
	}
	waitTemplateImage(t, ns, "wordpress:6.9.1-php8.3-apache")

	// The database is back and the new pod turns ready within a deadline of its own.
	runMySQL(t, ns, "blog-mysql")
	setPodStatus(t, ns, "blog-b-0", true, "")
	markDeploymentReady(t, ns)
	waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.LastGood == nil || st.LastGood.Name != next || st.Failed != nil || st.Rollbacks != 0 {
			return fmt.Errorf("rollout %+v, want %s the last good revision with no rollback", st, next)
		}
		return nil
	})
}

// TestOwnMySQLKeepsItsOwnUpgradePolicy checks that the site hands its MySQL the upgrade policy
// written for the MySQL, not its own: each rolls back on its own terms.
func TestOwnMySQLKeepsItsOwnUpgradePolicy(t *testing.T) {
	ns := newNamespace(t)
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Upgrade = appsv1alpha1.UpgradePolicy{AutoRollback: ptr.To(false), ProgressDeadlineSeconds: ptr.To[int32](20)}
		wp.Spec.Database.MySQL.Upgrade = appsv1alpha1.UpgradePolicy{ProgressDeadlineSeconds: ptr.To[int32](900)}
	})
	db := &appsv1alpha1.MySQL{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog-mysql", db) })
	if got := db.Spec.Upgrade; got.Deadline() != 900 || !got.RollsBack() {
		t.Errorf("the MySQL's upgrade policy is %+v, want a deadline of 900s and automatic rollback", got)
	}
}
