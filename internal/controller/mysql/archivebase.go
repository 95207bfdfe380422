package mysql

import (
	"context"
	"strconv"
	"time"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// archiveBaseCooldown is how long after a base backup that failed the operator waits before it
// takes another by itself: a base that fails is not retried at every pass.
const archiveBaseCooldown = 10 * time.Minute

// reconcileArchiveBase takes a backup for the binary log archive to replay from when it has
// none (point-in-time recovery was just turned on, or a gap moved the archive's start past every
// backup) and, in a cluster, once a promotion is newer than every backup: a restore after a
// failover then replays only what the new primary wrote. None while another backup of the MySQL
// is under way, nor within archiveBaseCooldown of a base that failed.
func (r *Reconciler) reconcileArchiveBase(ctx context.Context, m *appsv1alpha1.MySQL, backups []appsv1alpha1.MySQLBackup, now time.Time) error {
	if !m.Spec.Backup.PointInTimeRecoveryEnabled() {
		return nil
	}
	reading, read := r.shippers.latest(m.UID)
	if !needsArchiveBase(m, backups, reading, read, now) {
		return nil
	}
	name := resources.BackupName(m.Name, "base-"+strconv.FormatInt(now.Unix(), 36))
	return r.createBackup(ctx, m, name, appsv1alpha1.BackupReasonPointInTimeBase, nil)
}

// needsArchiveBase tells whether a base backup is to be taken now: the archive has none to
// replay from, or a promotion is newer than every backup; and no backup is under way, nor did a
// base of the same epoch fail within archiveBaseCooldown (a base cut short by a promotion is
// taken again for the new primary at once).
func needsArchiveBase(m *appsv1alpha1.MySQL, backups []appsv1alpha1.MySQLBackup, reading shipperReading, read bool, now time.Time) bool {
	noBase := read && reading.err == nil && reading.status.Shipping &&
		oldestBase(m.Spec.Backup, backups, reading.status.Domain, reading.status.ArchiveAfter) == nil
	promoted := m.Clustered() && m.Status.Epoch > newestBackupEpoch(backups)
	if !noBase && !promoted {
		return false
	}
	for i := range backups {
		b := &backups[i]
		underWay := b.Status.Phase == "" || b.Status.Phase == appsv1alpha1.BackupPending || b.Status.Phase == appsv1alpha1.BackupRunning
		recentlyFailed := b.Annotations[appsv1alpha1.AnnotationBackupReason] == appsv1alpha1.BackupReasonPointInTimeBase &&
			b.Annotations[appsv1alpha1.AnnotationBackupEpoch] == strconv.FormatInt(m.Status.Epoch, 10) &&
			b.Status.Phase == appsv1alpha1.BackupFailed && now.Sub(b.CreationTimestamp.Time) < archiveBaseCooldown
		if (underWay && b.DeletionTimestamp.IsZero()) || recentlyFailed {
			return false
		}
	}
	return true
}

// newestBackupEpoch is the largest epoch the operator recorded on a backup that has not failed:
// a backup a person asked for records none.
func newestBackupEpoch(backups []appsv1alpha1.MySQLBackup) int64 {
	var newest int64
	for i := range backups {
		if backups[i].Status.Phase == appsv1alpha1.BackupFailed {
			continue
		}
		if epoch, err := strconv.ParseInt(backups[i].Annotations[appsv1alpha1.AnnotationBackupEpoch], 10, 64); err == nil {
			newest = max(newest, epoch)
		}
	}
	return newest
}
