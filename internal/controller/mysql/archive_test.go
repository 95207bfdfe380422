package mysql

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
)

func TestArchiveStatus(t *testing.T) {
	at := func(hour int) *metav1.Time {
		return &metav1.Time{Time: time.Date(2026, 11, 27, hour, 0, 0, 0, time.UTC)}
	}
	base := func(name string, hour int, position string) appsv1alpha1.MySQLBackup {
		b := appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: name}}
		b.Status.Phase, b.Status.CompletionTime, b.Status.BinlogPosition, b.Status.GTIDPosition = appsv1alpha1.BackupSucceeded, at(hour), "binlog.000001:400", position
		// As the schedule takes them: with the policy's storage written out.
		b.Spec.Storage = &appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "backups"}}
		return b
	}
	elsewhere := base("elsewhere", 1, "0-1-500")
	elsewhere.Spec.Storage = &appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "elsewhere"}}
	noBinlog := base("no-binlog", 1, "")
	noBinlog.Status.BinlogPosition = ""
	failed := base("failed", 1, "0-1-500")
	failed.Status.Phase = appsv1alpha1.BackupFailed
	lastTime := time.Date(2026, 11, 27, 10, 41, 58, 0, time.UTC)
	shipping := backup.ShipperStatus{Shipping: true, LastShipped: "0-2-900", ArchiveAfter: 400, ArchiveLast: 900, ArchiveLastTime: &lastTime}
	backups := []appsv1alpha1.MySQLBackup{base("too-old", 1, "0-1-300"), elsewhere, noBinlog, failed, base("monday", 2, "0-1-450"), base("tuesday", 3, "0-2-800")}

	policy := &appsv1alpha1.MySQLBackupPolicy{Storage: appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "backups"}}}
	got := archiveStatus(policy, shipperReading{member: "db-1", status: shipping}, backups)
	if got.RecoverableFromBackup != "monday" || !got.RecoverableFrom.Equal(at(2)) || !got.RecoverableTo.Equal(&metav1.Time{Time: lastTime.Add(time.Second)}) ||
		got.LastArchivedGTID != "0-2-900" || got.Member != "db-1" || got.Message != "" || got.LagSeconds != 0 {
		t.Errorf("status of an archive from 400 to 900: %+v", got)
	}

	late := shipping
	late.LagSeconds = 42.3
	if got := archiveStatus(policy, shipperReading{member: "db-1", status: late}, backups); got.LagSeconds != 43 {
		t.Errorf("a shipper 42.3 s behind: lag %d", got.LagSeconds)
	}
	keepingUp := shipping
	keepingUp.LagSeconds = 1.2
	if got := archiveStatus(policy, shipperReading{member: "db-1", status: keepingUp}, backups); got.LagSeconds != 0 {
		t.Errorf("a shipper that keeps up: lag %d, want 0 so that an idle status stays as it is", got.LagSeconds)
	}

	for _, c := range []struct {
		name    string
		reading shipperReading
		backups []appsv1alpha1.MySQLBackup
		want    string
	}{
		{"no backup follows the archive", shipperReading{member: "db-1", status: shipping}, backups[:4], "no backup follows the start of the archive (sequence number 400"},
		{"the shipper cannot be read", shipperReading{member: "db-1", err: errors.New("connection refused")}, backups, "the shipper of db-1 cannot be read: connection refused"},
		{"the shipper fails", shipperReading{member: "db-1", status: backup.ShipperStatus{Shipping: true, Error: "cannot write: access denied"}}, backups, "the shipper of db-1 fails: cannot write"},
		{"the shipper does not ship", shipperReading{member: "db-1", status: backup.ShipperStatus{}}, backups, "does not ship"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := archiveStatus(policy, c.reading, c.backups); !strings.Contains(got.Message, c.want) {
				t.Errorf("message %q, want one saying %q", got.Message, c.want)
			}
		})
	}
}
