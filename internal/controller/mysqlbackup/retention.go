package mysqlbackup

import (
	"sort"
	"time"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// Prunable are the backups a new backup of a MySQL with retention may delete once it succeeded:
// those the MySQL took itself (scheduled and before upgrades; a backup a person asked for is
// theirs to delete), complete, and beyond keepLast counting the new one, or older than maxAge.
// The newest good backup (succeeded and, when verification is on, verified) is never among them:
// if the new backup fails verification it is still there.
func Prunable(siblings []appsv1alpha1.MySQLBackup, retention *appsv1alpha1.BackupRetention, verify bool, now time.Time) []appsv1alpha1.MySQLBackup {
	if retention == nil {
		return nil
	}
	var complete []appsv1alpha1.MySQLBackup
	for _, b := range siblings {
		if b.Status.Reason != appsv1alpha1.BackupReasonOnDemand && b.DeletionTimestamp.IsZero() &&
			(b.Status.Phase == appsv1alpha1.BackupSucceeded || b.Status.Phase == appsv1alpha1.BackupFailed) {
			complete = append(complete, b)
		}
	}
	sort.SliceStable(complete, func(i, j int) bool { return newer(&complete[i], &complete[j]) })
	protected := ""
	for i := range complete {
		if Good(&complete[i], verify) {
			protected = complete[i].Name
			break
		}
	}
	var prune []appsv1alpha1.MySQLBackup
	for i, b := range complete {
		if b.Name == protected {
			continue
		}
		beyondCount := retention.KeepLast != nil && int32(i) >= *retention.KeepLast-1
		tooOld := retention.MaxAge != nil && completedAt(&b).Add(retention.MaxAge.Duration).Before(now)
		if beyondCount || tooOld {
			prune = append(prune, b)
		}
	}
	return prune
}

// Good is true for a backup that can be restored: it succeeded and, when verification is asked
// for, passed it.
func Good(b *appsv1alpha1.MySQLBackup, verify bool) bool {
	if b.Status.Phase != appsv1alpha1.BackupSucceeded || b.Status.Verification == appsv1alpha1.VerificationFailed {
		return false
	}
	return !verify || b.Status.Verification == appsv1alpha1.VerificationPassed
}

func newer(a, b *appsv1alpha1.MySQLBackup) bool {
	ta, tb := completedAt(a), completedAt(b)
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return a.Name > b.Name
}

func completedAt(b *appsv1alpha1.MySQLBackup) time.Time {
	if b.Status.CompletionTime != nil {
		return b.Status.CompletionTime.Time
	}
	return b.CreationTimestamp.Time
}
