package wordpress_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	backupresources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

func s3Storage() appsv1alpha1.BackupStorage {
	return appsv1alpha1.BackupStorage{S3: &appsv1alpha1.S3Storage{
		Endpoint: "http://objects.storage.svc:7070", Bucket: "backups", Prefix: "prod", Region: "us-east-1",
		ForcePathStyle: true, CredentialsSecretRef: appsv1alpha1.SecretReference{Name: "s3-keys"},
	}}
}

// storeDatabaseBackup makes the MySQLBackup name of the database of a former site, old, succeed,
// playing the dump Job.
func storeDatabaseBackup(t *testing.T, ns, name string) {
	t.Helper()
	createMySQL(t, ns, "old-mysql", "wordpress", "wordpress")
	runMySQL(t, ns, "old-mysql")
	storage := s3Storage()
	b := &appsv1alpha1.MySQLBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.MySQLBackupSpec{MySQLName: "old-mysql", Storage: &storage},
	}
	if err := k8s.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	key := "prod/" + ns + "/old-mysql/" + name
	kubesim.FinishJob(t, k8s, waitJob(t, ns, b.JobName()), backupresources.DumpContainer, backup.Result{
		Key: key, Artifact: backup.ArtifactKey(key, false), Size: 4096, SHA256: "ab12", ServerVersion: "8.4.6", Databases: 1, Tables: 12,
	}, true)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := exists(ctx, ns, name, b); err != nil {
			return err
		}
		if b.Status.Phase != appsv1alpha1.BackupSucceeded {
			return fmt.Errorf("MySQLBackup %s is %q, want Succeeded", name, b.Status.Phase)
		}
		return nil
	})
}

// createRestorePoint creates the WordPressBackup name of the former site old, and writes the
// status of one whose two halves are stored.
func createRestorePoint(t *testing.T, ns, name string) {
	t.Helper()
	b := &appsv1alpha1.WordPressBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.WordPressBackupSpec{WordPressName: "old"},
	}
	if err := k8s.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	// The WordPressBackup controller runs: it takes the backup for pending (its site does not
	// exist) first, so that its write cannot land after the outcome written here and undo it.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := exists(ctx, ns, name, b); err != nil {
			return err
		}
		if b.Status.ObservedGeneration != b.Generation || b.Status.Phase != appsv1alpha1.BackupPending {
			return fmt.Errorf("WordPressBackup %s is %q at generation %d, want Pending", name, b.Status.Phase, b.Status.ObservedGeneration)
		}
		return nil
	})
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := exists(ctx, ns, name, b); err != nil {
			return err
		}
		if b.Status.Phase == appsv1alpha1.BackupSucceeded {
			return nil
		}
		now := metav1.Now()
		b.Status = appsv1alpha1.WordPressBackupStatus{
			Phase: appsv1alpha1.BackupSucceeded, StartTime: &now, CompletionTime: &now,
			DatabaseBackup: appsv1alpha1.DatabaseBackupName(name),
			Content: &appsv1alpha1.WordPressContentBackup{
				Location: appsv1alpha1.BackupLocation{Storage: s3Storage(), Key: "prod/" + ns + "/old/" + name},
				Size:     2048, SHA256: "cd34", Files: 3, Bytes: 6000,
			},
		}
		if err := k8s.Status().Update(ctx, b); err != nil {
			return err
		}
		return fmt.Errorf("status of WordPressBackup %s written; reading it back", name)
	})
}

func waitJob(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, name, job) })
	return job
}

// wantWordPressEvent waits for an Event of type and reason about the WordPress blog whose note
// holds note.
func wantWordPressEvent(t *testing.T, ns, eventType, reason, note string) {
	t.Helper()
	await.WaitForEvents(t, k8s, ns, timeout, func(events []eventsv1.Event) error {
		for _, e := range events {
			if e.Regarding.Kind == "WordPress" && e.Type == eventType && e.Reason == reason && strings.Contains(e.Note, note) {
				return nil
			}
		}
		return fmt.Errorf("no %s %s Event about the WordPress saying %q", eventType, reason, note)
	})
}

func TestSiteStartsFromARestorePoint(t *testing.T) {
	ns := newNamespace(t)
	storeDatabaseBackup(t, ns, "monday-db")
	createRestorePoint(t, ns, "monday")
	wp := createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Restore = &appsv1alpha1.WordPressRestore{BackupName: "monday"}
	})

	// The site's own MySQL loads the restore point's database.
	db := &appsv1alpha1.MySQL{}
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog-mysql", db) })
	if r := db.Spec.Restore; r == nil || r.BackupName != "monday-db" {
		t.Errorf("MySQL spec.restore = %+v, want the MySQLBackup monday-db", r)
	}

	// A Job fills wp-content from the archive.
	job := waitJob(t, ns, "blog-restore")
	if owner := metav1.GetControllerOf(job); owner == nil || owner.UID != wp.UID {
		t.Errorf("Job owner = %+v, want the WordPress", owner)
	}
	pod := job.Spec.Template.Spec
	if len(pod.Containers) != 1 || pod.Containers[0].Name != backupresources.ExtractContainer || pod.Containers[0].Image != testenv.BackupImage {
		t.Fatalf("containers = %+v, want %s running %s", pod.Containers, backupresources.ExtractContainer, testenv.BackupImage)
	}
	for _, want := range []string{backup.CommandExtract, "--" + backup.FlagUnlessNonEmpty, "--key=prod/" + ns + "/old/monday"} {
		if !slices.Contains(pod.Containers[0].Command, want) {
			t.Errorf("command %v lacks %s", pod.Containers[0].Command, want)
		}
	}
	if len(pod.Volumes) == 0 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "blog-content" {
		t.Errorf("volumes = %+v, want the site's wp-content claim first", pod.Volumes)
	}

	// The database is ready first: the site still waits for wp-content.
	runMySQL(t, ns, "blog-mysql")
	got := waitWordPress(t, ns, appsv1alpha1.ConditionDatabaseReady, metav1.ConditionTrue, "")
	if c := meta.FindStatusCondition(got.Status.Conditions, appsv1alpha1.ConditionProgressing); c == nil ||
		c.Status != metav1.ConditionTrue || c.Reason != appsv1alpha1.ReasonRestoring {
		t.Errorf("Progressing = %+v, want True Restoring", c)
	}
	if err := await.ConditionIs(got.Status.Conditions, got.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse); err != nil {
		t.Error(err)
	}
	if got.Status.Restore == nil || got.Status.Restore.CompletionTime != nil {
		t.Errorf("status.restore = %+v, want it started and not complete", got.Status.Restore)
	}
	noDeployment(t, ns)

	kubesim.FinishJob(t, k8s, job, backupresources.ExtractContainer, backup.Result{Key: "prod/" + ns + "/old/monday"}, true)
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog", &appsv1.Deployment{}) })
	// The status is written at the end of the pass that created the Deployment.
	await.Eventually(t, timeout, func(context.Context) error {
		got = get(t, ns, "blog", &appsv1alpha1.WordPress{})
		if r := got.Status.Restore; r == nil || r.CompletionTime == nil || r.Source != "WordPressBackup monday" {
			return fmt.Errorf("status.restore = %+v, want WordPressBackup monday, complete", r)
		}
		return nil
	})
	wantWordPressEvent(t, ns, "Normal", appsv1alpha1.ReasonRestored, "WordPressBackup monday")

	// The restore is over for good: its Job, gone, is not made again.
	if err := k8s.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	// A pass that follows the deletion, as a restarted operator's first pass would, reads only
	// status.restore.
	patchSpec(t, ns, `{"spec":{"replicas":0}}`)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		wp := &appsv1alpha1.WordPress{}
		if err := exists(ctx, ns, "blog", wp); err != nil {
			return err
		}
		if wp.Status.ObservedGeneration != wp.Generation {
			return fmt.Errorf("status is of generation %d, want %d", wp.Status.ObservedGeneration, wp.Generation)
		}
		return nil
	})
	time.Sleep(time.Second)
	if err := exists(context.Background(), ns, "blog-restore", &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("get the restore Job after the restore = %v, want NotFound", err)
	}
}

func TestRestoreWaitsForItsRestorePoint(t *testing.T) {
	ns := newNamespace(t)
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Restore = &appsv1alpha1.WordPressRestore{BackupName: "monday"}
	})
	got := waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRestoreSourceNotReady)
	if msg := conditionMessage(got, appsv1alpha1.ConditionDegraded); !strings.Contains(msg, "spec.restore.backupName") || !strings.Contains(msg, "monday") {
		t.Errorf("Degraded message = %q, want it to name spec.restore.backupName and the WordPressBackup", msg)
	}
	if err := await.ConditionIs(got.Status.Conditions, got.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse); err != nil {
		t.Error(err)
	}
	wantWordPressEvent(t, ns, "Warning", appsv1alpha1.ReasonRestoreSourceNotReady, "spec.restore.backupName")

	// The restore point appearing, stored, is all the site needs.
	createRestorePoint(t, ns, "monday")
	job := waitJob(t, ns, "blog-restore")
	waitWordPress(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, appsv1alpha1.ReasonRestoring)
	waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, "")

	// A Job that fails says why, and is made again once deleted.
	kubesim.FinishJob(t, k8s, job, backupresources.ExtractContainer, backup.Result{Error: "storage: access denied"}, false)
	got = waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRestoreSourceNotReady)
	if msg := conditionMessage(got, appsv1alpha1.ConditionDegraded); !strings.Contains(msg, "access denied") || !strings.Contains(msg, "blog-restore") {
		t.Errorf("Degraded message = %q, want the Job's failure", msg)
	}
	wantWordPressEvent(t, ns, "Warning", appsv1alpha1.ReasonRestoreSourceNotReady, "access denied")
	noDeployment(t, ns)
	if err := k8s.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		again := &batchv1.Job{}
		if err := exists(ctx, ns, "blog-restore", again); err != nil {
			return err
		}
		if again.UID == job.UID {
			return fmt.Errorf("the failed Job is still there")
		}
		return nil
	})
	waitWordPress(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, appsv1alpha1.ReasonRestoring)
}
