package mysql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	backupresources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

// withBackups gives the MySQL backups to object storage, with the schedule suspended: the only
// backup is the one before an image change.
func withBackups(m *appsv1alpha1.MySQL) {
	m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Suspend: true, Storage: appsv1alpha1.BackupStorage{
		S3: &appsv1alpha1.S3Storage{Endpoint: "http://objects.storage.svc:7070", Bucket: "backups", Region: "us-east-1",
			ForcePathStyle: true, CredentialsSecretRef: appsv1alpha1.SecretReference{Name: "s3-keys"}},
	}}
}

// waitingForBackup changes the image to image and waits for the backup that the change waits for,
// whose name it returns.
func waitingForBackup(t *testing.T, ns, image string) string {
	t.Helper()
	patchSpec(t, ns, fmt.Sprintf(`{"spec":{"image":%q}}`, image))
	m := waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionProgressing, appsv1alpha1.ReasonWaitingForBackup))
	return m.Status.Backup.PreUpgradeBackup
}

// finishBackup plays the Job controller and the dump for the backup name, which succeeds.
func finishBackup(t *testing.T, ns, name string) {
	t.Helper()
	job := &batchv1.Job{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-backup"}, job)
	})
	key := "prod/" + ns + "/db/" + name
	kubesim.FinishJob(t, k8s, job, backupresources.DumpContainer, backup.Result{
		Key: key, Artifact: backup.ArtifactKey(key, false), Size: 123456, SHA256: "ab12",
		ServerVersion: "8.4.6", BinlogPosition: "binlog.000002:157", Databases: 1, Tables: 3,
	}, true)
}

// upgradeWithBackup changes the image to image, lets its backup succeed and waits for the
// StatefulSet to run image; it returns the backup's name.
func upgradeWithBackup(t *testing.T, ns, image string) string {
	t.Helper()
	name := waitingForBackup(t, ns, image)
	finishBackup(t, ns, name)
	await.Eventually(t, timeout, func(context.Context) error { return imageIs(image)(get(t, ns, "db", &appsv1.StatefulSet{})) })
	return name
}

func TestRollbackNamesTheBackupBeforeTheUpgrade(t *testing.T) {
	ns := newNamespace(t)
	good := runningGood(t, ns, withBackups)
	name := upgradeWithBackup(t, ns, "mysql:8.4.7")
	serverFails(t, ns, imageIs("mysql:8.4.7"), appsv1alpha1.ReasonImagePullBackOff)

	m := rolledBack(t, ns)
	if f := m.Status.Rollout.Failed; f == nil || f.Backup != name {
		t.Errorf("status.rollout.failed = %+v, want it to name the backup %s", f, name)
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); !containsAll(c.Message, name) {
		t.Errorf("Degraded message = %q, want it to name the backup %s", c.Message, name)
	}
	wantEventNaming(t, ns, appsv1alpha1.EventRolledBack, name, good)
	// Going back to the image that ran needs no new backup.
	holdsFor(t, 2*time.Second, func() error {
		list := &appsv1alpha1.MySQLBackupList{}
		if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d backups, want only the one before the upgrade", len(list.Items))
		}
		return imageIs("mysql:8.4.6")(get(t, ns, "db", &appsv1.StatefulSet{}))
	})
}

// TestBackupBeforeUpgradeDoesNotStartTheDeadline holds the image change for a backup longer than
// the progress deadline: the rollout has not begun, so nothing is rolled back. The deadline runs
// from when the backup lets the image through; a server that then never turns Ready is rolled
// back at the deadline, naming the backup, and its pod is replaced at once.
func TestBackupBeforeUpgradeDoesNotStartTheDeadline(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	runningGood(t, ns, func(m *appsv1alpha1.MySQL) {
		withBackups(m)
		m.Spec.Upgrade.ProgressDeadlineSeconds = ptr.To[int32](10)
	})
	name := waitingForBackup(t, ns, "mysql:8.4.7")
	holdsFor(t, 11*time.Second, func() error {
		m := get(t, ns, "db", &appsv1alpha1.MySQL{})
		if ro := m.Status.Rollout; ro.Failed != nil || ro.Rollbacks != 0 || ro.LastGood == nil || ro.LastGood.Image != "mysql:8.4.6" {
			return fmt.Errorf("status.rollout = %+v while the backup runs, want no failure and 8.4.6 the last good image", ro)
		}
		if err := await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse); err != nil {
			return err
		}
		return imageIs("mysql:8.4.6")(get(t, ns, "db", &appsv1.StatefulSet{}))
	})

	opened := time.Now()
	finishBackup(t, ns, name)
	starting := serverFails(t, ns, imageIs("mysql:8.4.7"), "ContainerCreating")
	m := waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, func(m *appsv1alpha1.MySQL) error {
		if ro := m.Status.Rollout; ro.UpdateTime == nil || ro.UpdateTime.Time.Before(opened.Truncate(time.Second)) {
			return fmt.Errorf("status.rollout.updateTime = %v, want the deadline to run from %s, when the backup let the image through", ro.UpdateTime, opened)
		}
		return nil
	})
	if err := await.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse); err != nil {
		t.Errorf("the new server is starting: %v", err)
	}
	await.Eventually(t, 10*time.Second+timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, m); err != nil {
			return err
		}
		return reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonRolledBack)(m)
	})
	if waited := time.Since(opened); waited < 9*time.Second {
		t.Errorf("rolled back %s after the backup let the image through, before the deadline of 10s", waited)
	}
	if f := m.Status.Rollout.Failed; f == nil || f.Reason != appsv1alpha1.ReasonProgressDeadline || f.Backup != name {
		t.Errorf("status.rollout.failed = %+v, want ProgressDeadlineExceeded naming the backup %s", f, name)
	}
	// The pod never turned Ready and names no problem: it goes at once, not after a grace.
	t.Logf("rolled back %s after the backup let the image through", time.Since(opened).Round(time.Millisecond))
	observed := time.Now()
	restoredObserved(t, ns, imageIs("mysql:8.4.6"))
	podGone(t, starting, 5*time.Second)
	t.Logf("the failed pod went %s after the StatefulSet showed the restored revision", time.Since(observed).Round(time.Millisecond))
}

// TestBackupBeforeUpgradeHoldsWhenTheServerMissesAProbe keeps the old image while the backup runs
// even if the server stops answering its readiness probe meanwhile, as a busy server can while it
// is dumped: only a server that was not serving when the image changed skips the backup.
func TestBackupBeforeUpgradeHoldsWhenTheServerMissesAProbe(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	runningGood(t, ns, withBackups)
	name := waitingForBackup(t, ns, "mysql:8.4.7")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := get(t, ns, "db", &appsv1.StatefulSet{})
		sts.Status.ReadyReplicas, sts.Status.AvailableReplicas = 0, 0
		return k8s.Status().Update(ctx, sts)
	})
	waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse, nil)
	// Any later pass, here one that a change to the Secret causes, finds the MySQL not Available.
	secret := get(t, ns, "db-credentials", &corev1.Secret{})
	metav1.SetMetaDataAnnotation(&secret.ObjectMeta, "example.com/touched", "yes")
	if err := k8s.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	holdsFor(t, 3*time.Second, func() error {
		return imageIs("mysql:8.4.6")(get(t, ns, "db", &appsv1.StatefulSet{}))
	})
	finishBackup(t, ns, name)
	await.Eventually(t, timeout, func(context.Context) error { return imageIs("mysql:8.4.7")(get(t, ns, "db", &appsv1.StatefulSet{})) })
}

func containsAll(s string, words ...string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
