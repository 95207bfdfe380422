package mysqlbackup_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/backuptest"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

func TestNewMySQLStartsFromABackup(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", nil)
	createBackup(t, ns, "src", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = backuptest.S3Storage() })

	restored := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: ns},
		Spec: appsv1alpha1.MySQLSpec{Database: "shop", User: "shop", Image: "mysql:8.4.6",
			Restore: &appsv1alpha1.MySQLRestore{BackupName: "src"}},
	}
	if err := k8s.Create(context.Background(), restored); err != nil {
		t.Fatal(err)
	}
	// The server waits for its backup.
	waitMySQL(t, ns, "copy", func(m *appsv1alpha1.MySQL) error {
		if c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionProgressing); c == nil || c.Reason != appsv1alpha1.ReasonRestoreSourceNotReady {
			return fmt.Errorf("Progressing = %+v, want RestoreSourceNotReady", c)
		}
		return await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse)
	})
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "copy"}, &appsv1.StatefulSet{}); err == nil {
		t.Fatal("the StatefulSet exists before its backup succeeded")
	}
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "src-backup", timeout), dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/src"), true)

	sts := &appsv1.StatefulSet{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "copy"}, sts)
	})
	init := sts.Spec.Template.Spec.InitContainers
	if len(init) != 1 || init[0].Name != resources.FetchContainer {
		t.Fatalf("init containers = %+v, want the fetch of the backup", init)
	}
	for _, want := range []string{"--key=prod/" + ns + "/db/src", "--" + backup.FlagUnlessInit + "=/var/lib/mysql", "--out=/docker-entrypoint-initdb.d/restore.sql.gz"} {
		if !slices.Contains(init[0].Command, want) {
			t.Errorf("fetch command %v lacks %s", init[0].Command, want)
		}
	}
	mounted := false
	for _, mount := range sts.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounted = mounted || mount.MountPath == "/docker-entrypoint-initdb.d"
	}
	if !mounted {
		t.Error("the server does not see the fetched dump in /docker-entrypoint-initdb.d")
	}

	kubesim.RunStatefulSet(t, k8s, ns, "copy", timeout)
	m := waitMySQL(t, ns, "copy", func(m *appsv1alpha1.MySQL) error {
		if m.Status.Restore == nil || m.Status.Restore.CompletionTime == nil {
			return fmt.Errorf("status.restore = %+v, want it complete", m.Status.Restore)
		}
		return nil
	})
	if !strings.Contains(m.Status.Restore.Source, "src") {
		t.Errorf("status.restore.source = %q, want it to name the backup", m.Status.Restore.Source)
	}
	// Once served, the pod no longer needs the storage.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "copy"}, sts); err != nil {
			return err
		}
		if n := len(sts.Spec.Template.Spec.InitContainers); n != 0 {
			return fmt.Errorf("%d init containers left after the restore", n)
		}
		return nil
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.ReasonRestored)
}

func TestRestoreFromAMissingBackupIsDegraded(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: ns},
		Spec:       appsv1alpha1.MySQLSpec{Restore: &appsv1alpha1.MySQLRestore{BackupName: "nothing"}},
	}
	if err := k8s.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	waitMySQL(t, ns, "copy", func(m *appsv1alpha1.MySQL) error {
		c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "spec.restore.backupName") {
			return fmt.Errorf("Degraded = %+v, want True naming spec.restore.backupName", c)
		}
		return nil
	})
}

func TestScheduleStartsBackups(t *testing.T) {
	t.Parallel()
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) {
		m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "* * * * *", Storage: *backuptest.S3Storage()}
	})
	m := waitMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) error {
		if m.Status.Backup == nil || m.Status.Backup.NextScheduleTime == nil {
			return fmt.Errorf("status.backup = %+v, want nextScheduleTime", m.Status.Backup)
		}
		return nil
	})
	next := m.Status.Backup.NextScheduleTime.Time
	await.Eventually(t, timeout+timeUntil(next), func(ctx context.Context) error {
		list := &appsv1alpha1.MySQLBackupList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{appsv1alpha1.LabelMySQL: "db"}); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return fmt.Errorf("no scheduled backup yet (next at %s)", next)
		}
		b := list.Items[0]
		if b.Spec.Storage == nil || b.Spec.Storage.S3 == nil || b.Annotations["apps.appkeeper.dev/backup-reason"] != appsv1alpha1.BackupReasonScheduled {
			return fmt.Errorf("scheduled backup %s: spec %+v, annotations %v", b.Name, b.Spec, b.Annotations)
		}
		return nil
	})
}

// A restore from a MySQL to a point in time starts from the newest of its backups that completed
// before the target with the binary log on, and replays after it; with none, it is refused
// before anything is created.
func TestARestoreFromAMySQLStartsFromItsNewestBackupBeforeTheTarget(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) {
		m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 * * *", Suspend: true, Storage: *backuptest.S3Storage()}
	})
	for i, name := range []string{"older", "newer"} {
		createBackup(t, ns, name, func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = backuptest.S3Storage() })
		result := backuptest.DumpResult("prod/" + ns + "/db/" + name)
		result.BinlogPosition, result.GTIDPosition = "binlog.000001:4", fmt.Sprintf("0-1-%d", 100*(i+1))
		kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, name+"-backup", timeout), dumpContainer, result, true)
		backuptest.WaitBackup(t, k8s, ns, name, timeout, backuptest.PhaseIs(appsv1alpha1.BackupSucceeded))
	}
	newer := backuptest.WaitBackup(t, k8s, ns, "newer", timeout, backuptest.PhaseIs(appsv1alpha1.BackupSucceeded))
	target := metav1.NewTime(newer.Status.CompletionTime.Add(time.Second))
	await.Eventually(t, timeout, func(context.Context) error {
		if time.Now().Before(target.Time) {
			return fmt.Errorf("the target %s is still to come", target)
		}
		return nil
	})
	restore := func(name string, at metav1.Time) {
		m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1alpha1.MySQLSpec{Database: "shop", User: "shop", Image: "mariadb:10.11",
				Restore: &appsv1alpha1.MySQLRestore{MySQLName: "db", PointInTime: &appsv1alpha1.PointInTimeTarget{Time: &at}}}}
		if err := k8s.Create(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	restore("copy", target)
	sts := &appsv1.StatefulSet{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "copy"}, sts)
	})
	init := sts.Spec.Template.Spec.InitContainers
	if len(init) != 3 || init[0].Name != resources.FetchContainer || init[2].Name != resources.ReplayContainer ||
		!slices.Contains(init[0].Command, "--key=prod/"+ns+"/db/newer") ||
		!slices.Contains(init[2].Command, "--"+backup.FlagUntilTime+"="+target.UTC().Format(time.RFC3339)) {
		t.Fatalf("init containers %+v: want the fetch of newer, then the replay to %s", init, target)
	}
	waitMySQL(t, ns, "copy", func(m *appsv1alpha1.MySQL) error {
		if m.Status.Restore == nil || m.Status.Restore.Source != "MySQLBackup newer" {
			return fmt.Errorf("status.restore = %+v, want it to name the backup chosen", m.Status.Restore)
		}
		return nil
	})

	older := backuptest.WaitBackup(t, k8s, ns, "older", timeout, backuptest.PhaseIs(appsv1alpha1.BackupSucceeded))
	restore("too-early", metav1.NewTime(older.CreationTimestamp.Add(-time.Hour)))
	waitMySQL(t, ns, "too-early", func(m *appsv1alpha1.MySQL) error {
		c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "spec.restore.mysqlName: no backup of MySQL db completed before the target") {
			return fmt.Errorf("Degraded = %+v, want True saying no backup precedes the target", c)
		}
		return nil
	})
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "too-early"}, &appsv1.StatefulSet{}); err == nil {
		t.Error("the StatefulSet of a restore with no base exists")
	}
}
