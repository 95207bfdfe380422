package mysqlbackup

import (
	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/binlog"
)

// NewestBaseBefore is the newest backup of the MySQL mysql that a replay to target can start
// from, or nil: it succeeded, was taken with the binary log on, lies beside the archive (in the
// storage of policy, or with no storage of its own when policy is unknown), and completed before
// the target time, or holds no transaction after the target GTID.
func NewestBaseBefore(backups []appsv1alpha1.MySQLBackup, mysql string, policy *appsv1alpha1.MySQLBackupPolicy, target *appsv1alpha1.PointInTimeTarget) *appsv1alpha1.MySQLBackup {
	var want binlog.GTID
	if target.GTID != "" {
		var err error
		if want, err = binlog.ParseGTID(target.GTID); err != nil {
			return nil
		}
	}
	var best *appsv1alpha1.MySQLBackup
	for i := range backups {
		b := &backups[i]
		beside := b.Spec.Storage == nil || policy.KeepsBeside(b.Spec.Storage)
		if b.Spec.MySQLName != mysql || !beside || b.Status.Phase != appsv1alpha1.BackupSucceeded ||
			b.Status.BinlogPosition == "" || b.Status.CompletionTime == nil || !b.DeletionTimestamp.IsZero() {
			continue
		}
		if target.Time != nil && target.Time.Before(b.Status.CompletionTime) {
			continue
		}
		if target.GTID != "" {
			position, err := binlog.ParsePosition(b.Status.GTIDPosition)
			if err != nil || binlog.SeqIn(position, want.Domain) > want.Seq {
				continue
			}
		}
		if best == nil || newerBase(b, best) {
			best = b
		}
	}
	return best
}

// newerBase tells whether a completed after b, or in the same second (a status keeps seconds)
// holding more of the history.
func newerBase(a, b *appsv1alpha1.MySQLBackup) bool {
	if !a.Status.CompletionTime.Equal(b.Status.CompletionTime) {
		return b.Status.CompletionTime.Before(a.Status.CompletionTime)
	}
	pa, _ := binlog.ParsePosition(a.Status.GTIDPosition)
	pb, _ := binlog.ParsePosition(b.Status.GTIDPosition)
	return seqSum(pa) > seqSum(pb)
}

func seqSum(position []binlog.GTID) uint64 {
	var sum uint64
	for _, g := range position {
		sum += g.Seq
	}
	return sum
}
