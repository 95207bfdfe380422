// Package backuptest holds the fixtures and waits that the tests of the MySQLBackup and
// WordPressBackup controllers share. It stands apart from testcluster because it builds the results
// the backup commands report, and the tests of those commands use testcluster.
package backuptest

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

// S3Storage is an object storage a backup names; nothing listens there, as the tests play
// the Jobs that would reach it.
func S3Storage() *appsv1alpha1.BackupStorage {
	return &appsv1alpha1.BackupStorage{S3: &appsv1alpha1.S3Storage{
		Endpoint: "http://objects.storage.svc:7070", Bucket: "backups", Prefix: "prod", Region: "us-east-1",
		ForcePathStyle: true, CredentialsSecretRef: appsv1alpha1.SecretReference{Name: "s3-keys"},
	}}
}

// RunningSite creates the WordPress blog, whose own MySQL is backed up to S3Storage on demand
// only, and plays the StatefulSet controller until that MySQL is Available.
func RunningSite(t *testing.T, c client.Client, ns string, timeout time.Duration) *appsv1alpha1.WordPress {
	t.Helper()
	wp := &appsv1alpha1.WordPress{
		ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: ns},
		Spec: appsv1alpha1.WordPressSpec{Database: appsv1alpha1.WordPressDatabase{MySQL: &appsv1alpha1.MySQLSpec{
			Backup: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Suspend: true, Storage: *S3Storage()},
		}}},
	}
	if err := c.Create(context.Background(), wp); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog-mysql"}, &appsv1.StatefulSet{})
	})
	kubesim.RunStatefulSet(t, c, ns, "blog-mysql", timeout)
	return wp
}

// WaitRestorePoint waits until point's Complete condition has status, and gives point as it is then.
func WaitRestorePoint(t *testing.T, c client.Client, point *appsv1alpha1.WordPressBackup, status metav1.ConditionStatus, timeout time.Duration) *appsv1alpha1.WordPressBackup {
	t.Helper()
	got := &appsv1alpha1.WordPressBackup{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(point), got); err != nil {
			return err
		}
		return await.ConditionIs(got.Status.Conditions, got.Generation, appsv1alpha1.ConditionComplete, status)
	})
	return got
}

// WaitBackup waits until check accepts the MySQLBackup ns/name, and gives it as it is then.
func WaitBackup(t *testing.T, c client.Client, ns, name string, timeout time.Duration, check func(*appsv1alpha1.MySQLBackup) error) *appsv1alpha1.MySQLBackup {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
			return err
		}
		return check(b)
	})
	return b
}

// PhaseIs is a check for WaitBackup: the backup is in phase.
func PhaseIs(phase appsv1alpha1.BackupPhase) func(*appsv1alpha1.MySQLBackup) error {
	return func(b *appsv1alpha1.MySQLBackup) error {
		if b.Status.Phase != phase {
			return fmt.Errorf("phase = %q, want %q (conditions %v)", b.Status.Phase, phase, b.Status.Conditions)
		}
		return nil
	}
}

// WaitJob waits until the Job ns/name exists, and gives it.
func WaitJob(t *testing.T, c client.Client, ns, name string, timeout time.Duration) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)
	})
	return job
}

// DumpResult is what a dump Job that wrote key, and deleted pruned, reports.
func DumpResult(key string, pruned ...string) backup.Result {
	return backup.Result{
		Key: key, Artifact: backup.ArtifactKey(key, false), Size: 123456, SHA256: "ab12",
		ServerVersion: "8.4.6", BinlogPosition: "binlog.000002:157", Databases: 1, Tables: 3, Pruned: pruned,
	}
}
