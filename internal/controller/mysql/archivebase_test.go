package mysql

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
)

func TestABaseBackupIsTakenWhenTheArchiveHasNoneOrAfterAPromotion(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	storage := appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "backups"}}
	m := &appsv1alpha1.MySQL{Spec: appsv1alpha1.MySQLSpec{Members: 3, Backup: &appsv1alpha1.MySQLBackupPolicy{Storage: storage,
		PointInTimeRecovery: &appsv1alpha1.PointInTimeRecovery{Enabled: true}}}}
	m.Status.Epoch = 2
	backupAt := func(reason string, epoch string, phase appsv1alpha1.BackupPhase, created time.Time, position string) appsv1alpha1.MySQLBackup {
		b := appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created),
			Annotations: map[string]string{appsv1alpha1.AnnotationBackupReason: reason}}}
		if epoch != "" {
			b.Annotations[appsv1alpha1.AnnotationBackupEpoch] = epoch
		}
		b.Status.Phase, b.Status.BinlogPosition, b.Status.GTIDPosition = phase, "binlog.000001:4", position
		b.Status.CompletionTime = &metav1.Time{Time: created.Add(time.Minute)}
		return b
	}
	shipping := shipperReading{member: "db-0", status: backup.ShipperStatus{Shipping: true, ArchiveAfter: 100, ArchiveLast: 900}}
	base := backupAt(appsv1alpha1.BackupReasonScheduled, "2", appsv1alpha1.BackupSucceeded, now.Add(-time.Hour), "0-1-150")
	for _, c := range []struct {
		name    string
		backups []appsv1alpha1.MySQLBackup
		reading shipperReading
		read    bool
		want    bool
	}{
		{"a base since the last promotion", []appsv1alpha1.MySQLBackup{base}, shipping, true, false},
		{"no base the archive follows", []appsv1alpha1.MySQLBackup{backupAt(appsv1alpha1.BackupReasonScheduled, "2", appsv1alpha1.BackupSucceeded, now.Add(-time.Hour), "0-1-50")}, shipping, true, true},
		{"no backup at all, shipper not read yet: the promotion calls for one", nil, shipperReading{}, false, true},
		{"a promotion newer than every backup", []appsv1alpha1.MySQLBackup{backupAt(appsv1alpha1.BackupReasonScheduled, "1", appsv1alpha1.BackupSucceeded, now.Add(-time.Hour), "0-1-150")}, shipping, true, true},
		{"a person's backup records no epoch", []appsv1alpha1.MySQLBackup{backupAt(appsv1alpha1.BackupReasonOnDemand, "", appsv1alpha1.BackupSucceeded, now.Add(-time.Hour), "0-1-150")}, shipping, true, true},
		{"another backup under way", []appsv1alpha1.MySQLBackup{backupAt(appsv1alpha1.BackupReasonScheduled, "1", appsv1alpha1.BackupRunning, now.Add(-time.Minute), "")}, shipping, true, false},
		{"a base that failed five minutes ago", []appsv1alpha1.MySQLBackup{backupAt(appsv1alpha1.BackupReasonPointInTimeBase, "2", appsv1alpha1.BackupFailed, now.Add(-5*time.Minute), "")}, shipping, true, false},
		{"a base that succeeded five minutes ago, before a promotion", []appsv1alpha1.MySQLBackup{backupAt(appsv1alpha1.BackupReasonPointInTimeBase, "1", appsv1alpha1.BackupSucceeded, now.Add(-5*time.Minute), "0-1-150")}, shipping, true, true},
		{"a base that failed five minutes ago, before a promotion", []appsv1alpha1.MySQLBackup{backupAt(appsv1alpha1.BackupReasonPointInTimeBase, "1", appsv1alpha1.BackupFailed, now.Add(-5*time.Minute), "")}, shipping, true, true},
		{"a base that failed an hour ago", []appsv1alpha1.MySQLBackup{backupAt(appsv1alpha1.BackupReasonPointInTimeBase, "2", appsv1alpha1.BackupFailed, now.Add(-time.Hour), "")}, shipping, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := needsArchiveBase(m, c.backups, c.reading, c.read, now); got != c.want {
				t.Errorf("needsArchiveBase = %v, want %v", got, c.want)
			}
		})
	}
	single := m.DeepCopy()
	single.Spec.Members = 1
	if needsArchiveBase(single, []appsv1alpha1.MySQLBackup{base}, shipping, true, now) {
		t.Error("a single server with a base the archive follows takes another")
	}
}

func TestARestoreToAPointInTimeThatCanNeverSucceedIsRefusedBeforeAnythingIsCreated(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	b := &appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: "monday"}}
	b.Status.BinlogPosition, b.Status.GTIDPosition = "binlog.000003:400", "0-1-500"
	b.Status.CompletionTime = &metav1.Time{Time: now.Add(-2 * time.Hour)}
	at := func(d time.Duration) *appsv1alpha1.PointInTimeTarget {
		return &appsv1alpha1.PointInTimeTarget{Time: &metav1.Time{Time: now.Add(d)}}
	}
	for _, c := range []struct {
		name   string
		target *appsv1alpha1.PointInTimeTarget
		want   string
	}{
		{"no point in time", nil, ""},
		{"a time after the backup", at(-time.Hour), ""},
		{"a time past the archive, which may reach it", at(-time.Second), ""},
		{"a time before the backup completed", at(-3 * time.Hour), "is before MySQLBackup monday completed"},
		{"a time still to come", at(time.Hour), "has not come yet"},
		{"a GTID after the backup", &appsv1alpha1.PointInTimeTarget{GTID: "0-2-600"}, ""},
		{"a GTID the backup holds", &appsv1alpha1.PointInTimeTarget{GTID: "0-1-450"}, "already holds the transactions up to 0-1-500"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := pointInTimeRefusal(c.target, b, now)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("refusal %q, want one saying %q", got, c.want)
			}
		})
	}
	noBinlog := b.DeepCopy()
	noBinlog.Status.BinlogPosition = ""
	if got := pointInTimeRefusal(at(-time.Hour), noBinlog, now); !strings.Contains(got, "kept no binary log") {
		t.Errorf("a backup without a binary log: %q", got)
	}
}
