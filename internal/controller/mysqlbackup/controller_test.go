package mysqlbackup_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/test/framework/admission"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/backuptest"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

func TestOnDemandBackupRunsAJobAndRecordsItsResult(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) {
		m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Storage: *backuptest.S3Storage(), Suspend: true}
	})
	createBackup(t, ns, "first", nil)
	backuptest.WaitBackup(t, k8s, ns, "first", timeout, backuptest.PhaseIs(appsv1alpha1.BackupRunning))
	job := backuptest.WaitJob(t, k8s, ns, "first-backup", timeout)

	pod := job.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Image != testenv.BackupImage {
		t.Errorf("init containers = %+v, want one from the operator's image %s", pod.InitContainers, testenv.BackupImage)
	}
	dump := pod.Containers[0]
	if dump.Image != "mysql:8.4.6" {
		t.Errorf("dump image = %s, want the server's own mysql:8.4.6", dump.Image)
	}
	for _, want := range []string{"--host=db." + ns + ".svc", "--user=" + backup.AccountUser, "--key=prod/" + ns + "/db/first", "--s3-bucket=backups", "--s3-path-style=true"} {
		if !slices.Contains(dump.Command, want) {
			t.Errorf("dump command %v lacks %s", dump.Command, want)
		}
	}
	for _, env := range dump.Env {
		if env.Value != "" || env.ValueFrom == nil || env.ValueFrom.SecretKeyRef == nil {
			t.Errorf("env %s is not read from a Secret: %+v", env.Name, env)
		}
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the backup pod gets an API token it never needs")
	}

	kubesim.FinishJob(t, k8s, job, dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/first"), true)
	b := backuptest.WaitBackup(t, k8s, ns, "first", timeout, backuptest.PhaseIs(appsv1alpha1.BackupSucceeded))
	if b.Status.Size != 123456 || b.Status.SHA256 != "ab12" || b.Status.ServerVersion != "8.4.6" || b.Status.BinlogPosition != "binlog.000002:157" || b.Status.Tables != 3 {
		t.Errorf("status = %+v, want the Job's result", b.Status)
	}
	if b.Status.Location == nil || b.Status.Location.Key != "prod/"+ns+"/db/first" || b.Status.Location.Storage.S3 == nil {
		t.Errorf("status.location = %+v", b.Status.Location)
	}
	if b.Status.Reason != appsv1alpha1.BackupReasonOnDemand || b.Status.StartTime == nil || b.Status.CompletionTime == nil {
		t.Errorf("reason %q, start %v, completion %v", b.Status.Reason, b.Status.StartTime, b.Status.CompletionTime)
	}
	if err := await.ConditionIs(b.Status.Conditions, b.Generation, appsv1alpha1.ConditionComplete, metav1.ConditionTrue); err != nil {
		t.Error(err)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.ReasonBackupSucceeded)
	waitMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) error {
		if m.Status.Backup == nil || m.Status.Backup.LastSuccessfulBackup != "first" {
			return fmt.Errorf("status.backup = %+v, want lastSuccessfulBackup first", m.Status.Backup)
		}
		return nil
	})
}

func TestFailedBackupSaysWhy(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", nil)
	createBackup(t, ns, "broken", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = backuptest.S3Storage() })
	job := backuptest.WaitJob(t, k8s, ns, "broken-backup", timeout)
	if *job.Spec.BackoffLimit > 3 {
		t.Errorf("backoffLimit = %d: retries must be bounded", *job.Spec.BackoffLimit)
	}
	kubesim.FinishJob(t, k8s, job, dumpContainer, backup.Result{Error: "storage: bucket backups does not exist"}, false)
	b := backuptest.WaitBackup(t, k8s, ns, "broken", timeout, backuptest.PhaseIs(appsv1alpha1.BackupFailed))
	if c := meta.FindStatusCondition(b.Status.Conditions, appsv1alpha1.ConditionComplete); c == nil || c.Status != metav1.ConditionFalse ||
		!strings.Contains(c.Message, "bucket backups does not exist") {
		t.Errorf("Complete = %+v, want False with the Job's reason", c)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.ReasonBackupFailed)
	waitMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) error {
		if m.Status.Backup == nil || m.Status.Backup.LastFailedBackup != "broken" {
			return fmt.Errorf("status.backup = %+v, want lastFailedBackup broken", m.Status.Backup)
		}
		return nil
	})
}

func TestBackupWaitsForItsMySQLAndNeedsStorage(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	createBackup(t, ns, "early", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = backuptest.S3Storage() })
	b := backuptest.WaitBackup(t, k8s, ns, "early", timeout, backuptest.PhaseIs(appsv1alpha1.BackupPending))
	if c := meta.FindStatusCondition(b.Status.Conditions, appsv1alpha1.ConditionComplete); c == nil || !strings.Contains(c.Message, "does not exist") {
		t.Errorf("Complete = %+v, want it to say the MySQL does not exist", c)
	}
	availableMySQL(t, ns, "db", nil)
	backuptest.WaitBackup(t, k8s, ns, "early", timeout, backuptest.PhaseIs(appsv1alpha1.BackupRunning))

	createBackup(t, ns, "nowhere", nil)
	b = backuptest.WaitBackup(t, k8s, ns, "nowhere", timeout, backuptest.PhaseIs(appsv1alpha1.BackupFailed))
	if c := meta.FindStatusCondition(b.Status.Conditions, appsv1alpha1.ConditionComplete); c == nil || !strings.Contains(c.Message, "spec.storage") {
		t.Errorf("Complete = %+v, want it to name spec.storage", c)
	}
}

func TestVerificationFailureIsRecorded(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", nil)
	createBackup(t, ns, "checked", func(b *appsv1alpha1.MySQLBackup) {
		b.Spec.Storage = backuptest.S3Storage()
		b.Spec.Verify = verified
	})
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "checked-backup", timeout), dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/checked"), true)
	job := backuptest.WaitJob(t, k8s, ns, "checked-verify", timeout)
	spec := job.Spec.Template.Spec
	if len(spec.InitContainers) != 2 || spec.InitContainers[1].RestartPolicy == nil || *spec.InitContainers[1].RestartPolicy != corev1.ContainerRestartPolicyAlways ||
		spec.InitContainers[1].Image != "mysql:8.4.6" || spec.InitContainers[1].StartupProbe == nil {
		t.Errorf("verify pod: want a fetch init container, then the scratch server as a sidecar with a startup probe; got %+v", spec.InitContainers)
	}
	kubesim.FinishJob(t, k8s, job, verifyContainer, backup.Result{Verified: notVerified, Mismatches: []string{"shop.orders: rows 10 != 9"}}, true)
	b := backuptest.WaitBackup(t, k8s, ns, "checked", timeout, func(b *appsv1alpha1.MySQLBackup) error {
		if b.Status.Verification != appsv1alpha1.VerificationFailed {
			return fmt.Errorf("verification = %q", b.Status.Verification)
		}
		return nil
	})
	if c := meta.FindStatusCondition(b.Status.Conditions, appsv1alpha1.ConditionVerified); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "shop.orders") {
		t.Errorf("Verified = %+v, want False naming the table", c)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.ReasonVerificationFailed)
}

func TestRetentionPrunesOldScheduledBackups(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	keep := int32(2)
	availableMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) {
		m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Suspend: true, Storage: *backuptest.S3Storage(),
			Retention: &appsv1alpha1.BackupRetention{KeepLast: &keep}}
	})
	// Three earlier scheduled backups, oldest first.
	for _, name := range []string{"old-1", "old-2", "old-3"} {
		createBackup(t, ns, name, func(b *appsv1alpha1.MySQLBackup) {
			b.Annotations = map[string]string{"apps.appkeeper.dev/backup-reason": appsv1alpha1.BackupReasonScheduled}
		})
		kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, name+"-backup", timeout), dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/"+name), true)
		backuptest.WaitBackup(t, k8s, ns, name, timeout, backuptest.PhaseIs(appsv1alpha1.BackupSucceeded))
	}
	createBackup(t, ns, "new", func(b *appsv1alpha1.MySQLBackup) {
		b.Annotations = map[string]string{"apps.appkeeper.dev/backup-reason": appsv1alpha1.BackupReasonScheduled}
	})
	job := backuptest.WaitJob(t, k8s, ns, "new-backup", timeout)
	var pruned []string
	for _, arg := range job.Spec.Template.Spec.Containers[0].Command {
		if key, ok := strings.CutPrefix(arg, "--"+backup.FlagPrune+"="); ok {
			pruned = append(pruned, key)
		}
	}
	slices.Sort(pruned)
	if want := []string{"prod/" + ns + "/db/old-1", "prod/" + ns + "/db/old-2"}; !slices.Equal(pruned, want) {
		t.Fatalf("the new backup prunes %v, want %v (keepLast 2 counts the new one)", pruned, want)
	}
	kubesim.FinishJob(t, k8s, job, dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/new", pruned...), true)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		for _, name := range []string{"old-1", "old-2"} {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1alpha1.MySQLBackup{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("pruned backup %s still exists (%w)", name, err)
			}
		}
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "old-3"}, &appsv1alpha1.MySQLBackup{})
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.ReasonBackupPruned)
}

func TestImageChangeWaitsForTheBackupBeforeUpgrade(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) {
		m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Suspend: true, Storage: *backuptest.S3Storage()}
	})
	m := &appsv1alpha1.MySQL{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, m); err != nil {
		t.Fatal(err)
	}
	m.Spec.Image = "mysql:8.4.7"
	if err := k8s.Update(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	m = waitMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) error {
		if m.Status.Backup == nil || m.Status.Backup.PreUpgradeBackup == "" {
			return fmt.Errorf("status.backup = %+v, want a preUpgradeBackup", m.Status.Backup)
		}
		return await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue)
	})
	name := m.Status.Backup.PreUpgradeBackup
	requireImage := func(want string) {
		t.Helper()
		await.Eventually(t, timeout, func(ctx context.Context) error {
			sts := &appsv1.StatefulSet{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, sts); err != nil {
				return err
			}
			if got := sts.Spec.Template.Spec.Containers[0].Image; got != want {
				return fmt.Errorf("statefulset image = %s, want %s", got, want)
			}
			return nil
		})
	}
	requireImage("mysql:8.4.6")
	job := backuptest.WaitJob(t, k8s, ns, name+"-backup", timeout)
	if got := job.Spec.Template.Spec.Containers[0].Image; got != "mysql:8.4.6" {
		t.Errorf("the pre-upgrade dump runs %s, want the running server's mysql:8.4.6", got)
	}
	kubesim.FinishJob(t, k8s, job, dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/"+name), true)
	requireImage("mysql:8.4.7")
}

func TestFailedPreUpgradeBackupHoldsTheUpgrade(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) {
		m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Suspend: true, Storage: *backuptest.S3Storage()}
	})
	if err := k8s.Patch(context.Background(), &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}},
		client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"image":"mysql:8.4.7"}}`))); err != nil {
		t.Fatal(err)
	}
	m := waitMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) error {
		if m.Status.Backup == nil || m.Status.Backup.PreUpgradeBackup == "" {
			return fmt.Errorf("no preUpgradeBackup yet")
		}
		return nil
	})
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, m.Status.Backup.PreUpgradeBackup+"-backup", timeout), dumpContainer, backup.Result{Error: "storage: access denied"}, false)
	waitMySQL(t, ns, "db", func(m *appsv1alpha1.MySQL) error {
		c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != appsv1alpha1.ReasonPreUpgradeBackupFailed {
			return fmt.Errorf("Degraded = %+v, want True PreUpgradeBackupFailed", c)
		}
		return nil
	})
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, sts); err != nil {
		t.Fatal(err)
	}
	if got := sts.Spec.Template.Spec.Containers[0].Image; got != "mysql:8.4.6" {
		t.Errorf("statefulset image = %s after a failed pre-upgrade backup, want mysql:8.4.6", got)
	}
}

func TestInvalidBackupsAreRejected(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	for _, kind := range []string{"MySQLBackup", "WordPressBackup"} {
		admission.RequireInvalidSpecsRejected(t, k8s, ns, kind)
		admission.RequireInvalidUpdatesRejected(t, k8s, ns, kind)
	}
}

func TestFinishedJobsLetGoOfABackupVolume(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	availableMySQL(t, ns, "db", nil)
	createBackup(t, ns, "on-volume", func(b *appsv1alpha1.MySQLBackup) {
		b.Spec.Storage = &appsv1alpha1.BackupStorage{Volume: &appsv1alpha1.VolumeStorage{ClaimName: "backups"}}
	})
	createBackup(t, ns, "on-s3", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = backuptest.S3Storage() })
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "on-volume-backup", timeout), dumpContainer, backuptest.DumpResult(ns+"/db/on-volume"), true)
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "on-s3-backup", timeout), dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/on-s3"), true)
	backuptest.WaitBackup(t, k8s, ns, "on-volume", timeout, backuptest.PhaseIs(appsv1alpha1.BackupSucceeded))
	backuptest.WaitBackup(t, k8s, ns, "on-s3", timeout, backuptest.PhaseIs(appsv1alpha1.BackupSucceeded))
	// Its pod, even completed, would keep the claim from being deleted.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "on-volume-backup"}, &batchv1.Job{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the finished Job on the volume is still there (%w)", err)
		}
		return nil
	})
	// A Job that writes to object storage holds no claim: it stays, with its log.
	backuptest.WaitJob(t, k8s, ns, "on-s3-backup", timeout)
}
