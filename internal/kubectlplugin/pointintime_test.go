package kubectlplugin_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// archivedBackup is a backup of mysql that completed at hour:minute holding the GTID position.
func archivedBackup(t *testing.T, ns, name, mysql string, hour, minute int, position string, beside bool) {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1alpha1.MySQLBackupSpec{MySQLName: mysql}}
	if !beside {
		b.Spec.Storage = &appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "elsewhere"}}
	}
	create(t, b)
	b.Status.Phase, b.Status.BinlogPosition, b.Status.GTIDPosition = appsv1alpha1.BackupSucceeded, "binlog.000001:400", position
	b.Status.CompletionTime = &metav1.Time{Time: time.Date(2026, 11, 27, hour, minute, 0, 0, time.UTC)}
	setStatus(t, b)
}

// A restore to a point in time starts from the newest backup before the target, or the one
// named, and refuses a target outside the window the MySQL's status shows.
func TestRestoreToAPointInTime(t *testing.T) {
	ns := newNamespace(t, "restore-pitr")
	model := backedUpMySQL(ns, "db")
	model.Spec.Backup.PointInTimeRecovery = &appsv1alpha1.PointInTimeRecovery{Enabled: true}
	create(t, model)
	model.Status.PointInTimeRecovery = &appsv1alpha1.PointInTimeRecoveryStatus{Member: "db-0", RecoverableFromBackup: "early",
		RecoverableFrom: &metav1.Time{Time: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)},
		RecoverableTo:   &metav1.Time{Time: time.Date(2026, 11, 27, 11, 0, 0, 0, time.UTC)}}
	setStatus(t, model)
	archivedBackup(t, ns, "early", "db", 9, 0, "0-1-100", true)
	archivedBackup(t, ns, "nine-thirty", "db", 9, 30, "0-1-200", true)
	archivedBackup(t, ns, "late", "db", 10, 30, "0-1-300", true)
	archivedBackup(t, ns, "elsewhere", "db", 10, 40, "0-1-310", false)
	archivedBackup(t, ns, "other-mysql", "other", 10, 50, "0-9-5", true)
	scheduled := &appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scheduled"},
		Spec: appsv1alpha1.MySQLBackupSpec{MySQLName: "db", Storage: model.Spec.Backup.Storage.DeepCopy()}}
	create(t, scheduled)
	scheduled.Status.Phase, scheduled.Status.BinlogPosition, scheduled.Status.GTIDPosition = appsv1alpha1.BackupSucceeded, "binlog.000001:9", "0-1-150"
	scheduled.Status.CompletionTime = &metav1.Time{Time: time.Date(2026, 11, 27, 9, 10, 0, 0, time.UTC)}
	setStatus(t, scheduled)

	for _, c := range []struct {
		args       []string
		to, base   string
		time, gtid string
	}{
		{[]string{"--time", "2026-11-27T10:45:00Z"}, "at-1045", "late", "2026-11-27T10:45:00Z", ""},
		{[]string{"--time", "2026-11-27T10:20:00+00:00"}, "at-1020", "nine-thirty", "2026-11-27T10:20:00Z", ""},
		{[]string{"--gtid", "0-1-250"}, "at-250", "nine-thirty", "", "0-1-250"},
		{[]string{"--from", "early", "--time", "2026-11-27T10:45:00Z"}, "from-early", "early", "2026-11-27T10:45:00Z", ""},
		{[]string{"--time", "2026-11-27T09:20:00Z"}, "at-0920", "scheduled", "2026-11-27T09:20:00Z", ""},
	} {
		out := succeeds(t, append([]string{"restore", "-n", ns, "mysql/db", "--to", c.to, "--wait=false"}, c.args...)...)
		m := &appsv1alpha1.MySQL{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.to}, m); err != nil {
			t.Fatal(err)
		}
		r := m.Spec.Restore
		if r == nil || r.BackupName != c.base || r.PointInTime == nil {
			t.Fatalf("%v: spec.restore %+v, want a replay from %s", c.args, r, c.base)
		}
		if got := r.PointInTime; (c.time != "" && (got.Time == nil || got.Time.UTC().Format(time.RFC3339) != c.time)) || got.GTID != c.gtid {
			t.Errorf("%v: spec.restore.pointInTime %+v, want time %q gtid %q", c.args, got, c.time, c.gtid)
		}
		t.Logf("%v: %s", c.args, out)
	}

	fails(t, 1, []string{"--time 2026-11-27T11:30:00Z is outside what the archive of mysql/db can restore: from 2026-11-27T09:00:00Z to 2026-11-27T11:00:00Z"},
		"restore", "-n", ns, "mysql/db", "--to", "too-late", "--time", "2026-11-27T11:30:00Z")
	fails(t, 1, []string{"no backup of mysql/db completed before the target"}, "restore", "-n", ns, "mysql/db", "--to", "too-early", "--gtid", "0-1-50")
	fails(t, 2, []string{"is not an RFC 3339 time"}, "restore", "-n", ns, "mysql/db", "--to", "x", "--time", "yesterday at ten")
	fails(t, 2, []string{"give --time or --gtid, not both"}, "restore", "-n", ns, "mysql/db", "--to", "x", "--time", "2026-11-27T10:45:00Z", "--gtid", "0-1-250")
	fails(t, 2, []string{"is not a GTID"}, "restore", "-n", ns, "mysql/db", "--to", "x", "--gtid", "0-1")
	fails(t, 2, []string{"--time and --gtid restore a MySQL"}, "restore", "-n", ns, "wp/blog", "--to", "x", "--time", "2026-11-27T10:45:00Z")
}
