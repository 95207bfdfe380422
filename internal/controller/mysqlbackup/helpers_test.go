package mysqlbackup_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/internal/testenv"
	"github.com/appkeeper/appkeeper/internal/testutil"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.RunWithOperator(m, &k8s))
}

const timeout = 20 * time.Second

func s3Storage() *appsv1alpha1.BackupStorage {
	return &appsv1alpha1.BackupStorage{S3: &appsv1alpha1.S3Storage{
		Endpoint: "http://objects.storage.svc:7070", Bucket: "backups", Prefix: "prod", Region: "us-east-1",
		ForcePathStyle: true, CredentialsSecretRef: appsv1alpha1.SecretReference{Name: "s3-keys"},
	}}
}

// availableMySQL creates the MySQL db and plays the StatefulSet controller until it is Available.
func availableMySQL(t *testing.T, ns, name string, mutate func(*appsv1alpha1.MySQL)) *appsv1alpha1.MySQL {
	t.Helper()
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.MySQLSpec{Database: "shop", User: "shop", Image: "mysql:8.4.6"},
	}
	if mutate != nil {
		mutate(m)
	}
	if err := k8s.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.StatefulSet{})
	})
	testutil.RunStatefulSet(t, k8s, ns, name, timeout)
	return waitMySQL(t, ns, name, func(m *appsv1alpha1.MySQL) error {
		return testutil.ConditionIs(m.Status.Conditions, m.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	})
}

func waitMySQL(t *testing.T, ns, name string, check func(*appsv1alpha1.MySQL) error) *appsv1alpha1.MySQL {
	t.Helper()
	m := &appsv1alpha1.MySQL{}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return err
		}
		return check(m)
	})
	return m
}

// runningSite creates the WordPress blog, whose own MySQL is backed up to s3Storage on demand only,
// and plays the StatefulSet controller until that MySQL is Available.
func runningSite(t *testing.T, ns string) *appsv1alpha1.WordPress {
	t.Helper()
	wp := &appsv1alpha1.WordPress{
		ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: ns},
		Spec: appsv1alpha1.WordPressSpec{Database: appsv1alpha1.WordPressDatabase{MySQL: &appsv1alpha1.MySQLSpec{
			Backup: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 3 * * *", Suspend: true, Storage: *s3Storage()},
		}}},
	}
	if err := k8s.Create(context.Background(), wp); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog-mysql"}, &appsv1.StatefulSet{})
	})
	testutil.RunStatefulSet(t, k8s, ns, "blog-mysql", timeout)
	return wp
}

// waitRestorePoint waits until point's Complete condition has status, and gives point as it is then.
func waitRestorePoint(t *testing.T, point *appsv1alpha1.WordPressBackup, status metav1.ConditionStatus) *appsv1alpha1.WordPressBackup {
	t.Helper()
	got := &appsv1alpha1.WordPressBackup{}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(point), got); err != nil {
			return err
		}
		return testutil.ConditionIs(got.Status.Conditions, got.Generation, appsv1alpha1.ConditionComplete, status)
	})
	return got
}

func createBackup(t *testing.T, ns, name string, mutate func(*appsv1alpha1.MySQLBackup)) {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.MySQLBackupSpec{MySQLName: "db"},
	}
	if mutate != nil {
		mutate(b)
	}
	if err := k8s.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

func waitBackup(t *testing.T, ns, name string, check func(*appsv1alpha1.MySQLBackup) error) *appsv1alpha1.MySQLBackup {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
			return err
		}
		return check(b)
	})
	return b
}

func phaseIs(phase appsv1alpha1.BackupPhase) func(*appsv1alpha1.MySQLBackup) error {
	return func(b *appsv1alpha1.MySQLBackup) error {
		if b.Status.Phase != phase {
			return fmt.Errorf("phase = %q, want %q (conditions %v)", b.Status.Phase, phase, b.Status.Conditions)
		}
		return nil
	}
}

func waitJob(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)
	})
	return job
}

func dumpResult(key string, pruned ...string) backup.Result {
	return backup.Result{
		Key: key, Artifact: backup.ArtifactKey(key, false), Size: 123456, SHA256: "ab12",
		ServerVersion: "8.4.6", BinlogPosition: "binlog.000002:157", Databases: 1, Tables: 3, Pruned: pruned,
	}
}

var (
	dumpContainer   = resources.DumpContainer
	verifyContainer = resources.VerifyContainer
	verified        = ptr.To(true)
	notVerified     = ptr.To(false)
)

func timeUntil(t time.Time) time.Duration { return time.Until(t) }
