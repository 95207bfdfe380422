package metrics_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// availableMySQL creates the MySQL db, backed up every day at 03:00, and plays the StatefulSet
// controller until it is Available.
func availableMySQL(t *testing.T, ns string) {
	t.Helper()
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: appsv1alpha1.MySQLSpec{Database: "shop", User: "shop", Image: "mysql:8.4.6",
			Backup: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Storage: appsv1alpha1.BackupStorage{S3: &appsv1alpha1.S3Storage{
				Endpoint: "http://objects.storage.svc:7070", Bucket: "backups", Region: "us-east-1",
				CredentialsSecretRef: appsv1alpha1.SecretReference{Name: "s3-keys"},
			}}}},
	}
	if err := k8s.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &appsv1.StatefulSet{})
	})
	kubesim.RunStatefulSet(t, k8s, ns, "db", timeout)
	waitSample(t, "appkeeper_resource_condition", resource("MySQL", ns, "db", "condition", appsv1alpha1.ConditionAvailable, "status", "true"), 1)
}

// takeBackup asks for the backup name of the MySQL db and plays its Job, which succeeds or not,
// then returns the backup as its status ends.
func takeBackup(t *testing.T, ns, name string, succeeds bool) *appsv1alpha1.MySQLBackup {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.MySQLBackupSpec{MySQLName: "db"},
	}
	if err := k8s.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: b.JobName()}, job)
	})
	key := ns + "/db/" + name
	result := backup.Result{Key: key, Artifact: backup.ArtifactKey(key, false), Size: 123456, SHA256: "ab12",
		ServerVersion: "8.4.6", Databases: 1, Tables: 3}
	want := appsv1alpha1.BackupSucceeded
	if !succeeds {
		result, want = backup.Result{Error: "storage: bucket backups does not exist"}, appsv1alpha1.BackupFailed
	}
	kubesim.FinishJob(t, k8s, job, resources.DumpContainer, result, succeeds)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		if b.Status.Phase != want {
			return fmt.Errorf("backup %s is %q, want %s", name, b.Status.Phase, want)
		}
		return nil
	})
	return b
}

func TestMySQLBackupsAreScraped(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "metrics")
	availableMySQL(t, ns)
	db := resource("MySQL", ns, "db")
	waitSample(t, "appkeeper_backup_schedule_interval_seconds", db, 24*60*60)
	text := scrape(t)
	if _, ok := sample(text, "appkeeper_backup_last_success_timestamp_seconds", db); ok {
		t.Error("a last successful backup before the first backup")
	}
	for name, want := range map[string]float64{"appkeeper_backup_failures_total": 0, "appkeeper_backup_verification_failed": 0, "appkeeper_resource_replicas_desired": 1} {
		if got, ok := sample(text, name, db); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series(name, db), got, ok, want)
		}
	}
	if got, ok := sample(text, "appkeeper_volume_claim_info", resource("MySQL", ns, "db", "persistentvolumeclaim", "data-db-0")); !ok || got != 1 {
		t.Errorf("no volume claim data-db-0 for the MySQL: %v %v", got, ok)
	}

	b := takeBackup(t, ns, "first", true)
	completed := float64(b.Status.CompletionTime.Unix())
	waitSample(t, "appkeeper_backup_last_success_timestamp_seconds", db, completed)
	text = scrape(t)
	want := map[string]float64{
		"appkeeper_backup_last_size_bytes":       123456,
		"appkeeper_backup_last_duration_seconds": b.Status.CompletionTime.Sub(b.Status.StartTime.Time).Seconds(),
		"appkeeper_backup_failures_total":        0,
	}
	for name, want := range want {
		if got, ok := sample(text, name, db); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series(name, db), got, ok, want)
		}
	}

	takeBackup(t, ns, "second", false)
	waitSample(t, "appkeeper_backup_failures_total", db, 1)
	// A failure leaves the newest successful backup the one the series speak of.
	if got, _ := sample(scrape(t), "appkeeper_backup_last_success_timestamp_seconds", db); got != completed {
		t.Errorf("last success %v after a failed backup, want %v", got, completed)
	}
}
