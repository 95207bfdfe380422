package mysql

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// Annotations of a pre-upgrade backup: the image change it guards.
const (
	AnnotationUpgradeFrom = "apps.appkeeper.dev/upgrade-from"
	AnnotationUpgradeTo   = "apps.appkeeper.dev/upgrade-to"
)

// upgradeGate is what the pre-upgrade backup allows: hold keeps the running image, with why.
type upgradeGate struct {
	hold    bool
	failed  bool
	message string
}

// preUpgradeGate takes a backup before a MySQL with backups configured moves to a new image, and
// holds the running image until that backup has succeeded. A failed backup holds the upgrade
// until a person deletes that backup (a new one is taken) or removes spec.backup.
func (r *Reconciler) preUpgradeGate(ctx context.Context, m *appsv1alpha1.MySQL, sts *appsv1.StatefulSet, backups []appsv1alpha1.MySQLBackup, now time.Time) (upgradeGate, error) {
	running := resources.Image(sts)
	if m.Spec.Backup == nil || running == "" || running == m.Spec.Image {
		return upgradeGate{}, nil
	}
	var guard *appsv1alpha1.MySQLBackup
	for i := range backups {
		b := &backups[i]
		if b.Annotations[AnnotationUpgradeFrom] == running && b.Annotations[AnnotationUpgradeTo] == m.Spec.Image && b.DeletionTimestamp.IsZero() &&
			(guard == nil || b.CreationTimestamp.After(guard.CreationTimestamp.Time)) {
			guard = b
		}
	}
	if guard == nil && !meta.IsStatusConditionTrue(m.Status.Conditions, appsv1alpha1.ConditionAvailable) {
		// A server that does not serve has nothing a backup could read, and holding its image
		// would keep a person from fixing it with a new one. Once the backup is taken, the
		// server's readiness no longer decides: a probe missed under the dump's load must not
		// let the new image in before the backup is complete.
		log.FromContext(ctx).Info("upgrading without a backup: the server is not Available", "from", running, "to", m.Spec.Image)
		return upgradeGate{}, nil
	}
	if guard == nil {
		name := resources.BackupName(m.Name, preUpgradeSuffix(now))
		err := r.createBackup(ctx, m, name, appsv1alpha1.BackupReasonPreUpgrade,
			map[string]string{AnnotationUpgradeFrom: running, AnnotationUpgradeTo: m.Spec.Image})
		if err != nil {
			return upgradeGate{}, err
		}
		ensureSummary(m).PreUpgradeBackup = name
		return upgradeGate{hold: true, message: fmt.Sprintf("backing up before the upgrade from %s to %s: MySQLBackup %s", running, m.Spec.Image, name)}, nil
	}
	ensureSummary(m).PreUpgradeBackup = guard.Name
	switch guard.Status.Phase {
	case appsv1alpha1.BackupSucceeded:
		return upgradeGate{}, nil
	case appsv1alpha1.BackupFailed:
		return upgradeGate{hold: true, failed: true, message: fmt.Sprintf("the backup %s before the upgrade from %s to %s failed, so the server keeps running %s; "+
			"delete that MySQLBackup to try again, or remove spec.backup to upgrade without a backup", guard.Name, running, m.Spec.Image, running)}, nil
	}
	return upgradeGate{hold: true, message: fmt.Sprintf("backing up before the upgrade from %s to %s: MySQLBackup %s is %s", running, m.Spec.Image, guard.Name, phaseOrPending(guard))}, nil
}

func phaseOrPending(b *appsv1alpha1.MySQLBackup) string {
	if b.Status.Phase == "" {
		return string(appsv1alpha1.BackupPending)
	}
	return string(b.Status.Phase)
}
