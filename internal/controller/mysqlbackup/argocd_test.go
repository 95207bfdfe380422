package mysqlbackup_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/config/argocd"
	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/internal/testutil"
)

// Argo CD, with appkeeper's health check, reads a backup as on its way while it waits for its MySQL,
// runs or is verified, healthy once stored, and degraded once it failed or did not pass verification:
// a sync wave after a backup goes on only once the backup can be relied on.
func TestArgoCDReadsTheHealthOfABackup(t *testing.T) {
	ns := testutil.NewNamespace(t, k8s, "bak")
	named := func(name string) *appsv1alpha1.MySQLBackup {
		return &appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	createBackup(t, ns, "checked", func(b *appsv1alpha1.MySQLBackup) {
		b.Spec.Storage = s3Storage()
		b.Spec.Verify = verified
	})
	waitBackup(t, ns, "checked", phaseIs(appsv1alpha1.BackupPending))
	testutil.RequireArgoCDHealth(t, k8s, named("checked"), argocd.Progressing)

	availableMySQL(t, ns, "db", nil)
	waitBackup(t, ns, "checked", phaseIs(appsv1alpha1.BackupRunning))
	testutil.RequireArgoCDHealth(t, k8s, named("checked"), argocd.Progressing)
	testutil.FinishJob(t, k8s, waitJob(t, ns, "checked-backup"), dumpContainer, dumpResult("prod/"+ns+"/db/checked"), true)
	verify := waitJob(t, ns, "checked-verify")
	waitBackup(t, ns, "checked", phaseIs(appsv1alpha1.BackupSucceeded))
	testutil.RequireArgoCDHealth(t, k8s, named("checked"), argocd.Progressing)
	testutil.FinishJob(t, k8s, verify, verifyContainer, backup.Result{Verified: notVerified, Mismatches: []string{"shop.orders: rows 10 != 9"}}, true)
	waitBackup(t, ns, "checked", func(b *appsv1alpha1.MySQLBackup) error {
		if b.Status.Verification != appsv1alpha1.VerificationFailed {
			return fmt.Errorf("verification = %q", b.Status.Verification)
		}
		return nil
	})
	testutil.RequireArgoCDHealth(t, k8s, named("checked"), argocd.Degraded)

	createBackup(t, ns, "stored", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = s3Storage() })
	testutil.FinishJob(t, k8s, waitJob(t, ns, "stored-backup"), dumpContainer, dumpResult("prod/"+ns+"/db/stored"), true)
	waitBackup(t, ns, "stored", phaseIs(appsv1alpha1.BackupSucceeded))
	testutil.RequireArgoCDHealth(t, k8s, named("stored"), argocd.Healthy)

	createBackup(t, ns, "broken", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = s3Storage() })
	testutil.FinishJob(t, k8s, waitJob(t, ns, "broken-backup"), dumpContainer, backup.Result{Error: "storage: bucket backups does not exist"}, false)
	waitBackup(t, ns, "broken", phaseIs(appsv1alpha1.BackupFailed))
	testutil.RequireArgoCDHealth(t, k8s, named("broken"), argocd.Degraded)
}
