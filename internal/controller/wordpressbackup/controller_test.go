package wordpressbackup_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/backuptest"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

func TestWordPressRestorePointHoldsDatabaseAndContent(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	ctx := context.Background()
	wp := backuptest.RunningSite(t, k8s, ns, timeout)

	point := &appsv1alpha1.WordPressBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "launch", Namespace: ns},
		Spec:       appsv1alpha1.WordPressBackupSpec{WordPressName: "blog"},
	}
	if err := k8s.Create(ctx, point); err != nil {
		t.Fatal(err)
	}
	content := backuptest.WaitJob(t, k8s, ns, "launch-content", timeout)
	pod := content.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != testenv.BackupImage || !slices.Contains(c.Command, backup.CommandArchive) ||
		!slices.Contains(c.Command, "--key=prod/"+ns+"/blog/launch") {
		t.Errorf("archive container: image %s, command %v", c.Image, c.Command)
	}
	if len(c.VolumeMounts) == 0 || !c.VolumeMounts[0].ReadOnly || pod.Volumes[0].PersistentVolumeClaim == nil ||
		pod.Volumes[0].PersistentVolumeClaim.ClaimName != wp.ContentClaimName() {
		t.Errorf("the archive does not read the site's volume %s read-only: %+v, %+v", wp.ContentClaimName(), c.VolumeMounts, pod.Volumes)
	}
	if pod.Affinity == nil || pod.Affinity.PodAffinity == nil {
		t.Error("the archive of a ReadWriteOnce volume must run beside the site's pods")
	}
	db := backuptest.WaitBackup(t, k8s, ns, "launch-db", timeout, backuptest.PhaseIs(appsv1alpha1.BackupRunning))
	if db.Spec.MySQLName != "blog-mysql" || db.Spec.Storage == nil {
		t.Errorf("database backup spec = %+v", db.Spec)
	}
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "launch-db-backup", timeout), resources.DumpContainer, backuptest.DumpResult("prod/"+ns+"/blog-mysql/launch-db"), true)
	kubesim.FinishJob(t, k8s, content, resources.ArchiveContainer, backup.Result{Key: "prod/" + ns + "/blog/launch", Size: 2048, SHA256: "cd34", Files: 12, Bytes: 40960}, true)

	got := backuptest.WaitRestorePoint(t, k8s, point, metav1.ConditionTrue, timeout)
	if got.Status.Phase != appsv1alpha1.BackupSucceeded || got.Status.DatabaseBackup != "launch-db" || got.Status.Content == nil ||
		got.Status.Content.Files != 12 || got.Status.Content.SHA256 != "cd34" || got.Status.Content.Location.Key != "prod/"+ns+"/blog/launch" {
		t.Errorf("status = %+v", got.Status)
	}
	// Its pod, even completed, would keep the site's volume from being deleted.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(content), &batchv1.Job{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the finished archive Job is still there (%w)", err)
		}
		return nil
	})
}

func TestWordPressRestorePointFailsWithEitherHalf(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	ctx := context.Background()
	wp := &appsv1alpha1.WordPress{
		ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: ns},
		Spec:       appsv1alpha1.WordPressSpec{Database: appsv1alpha1.WordPressDatabase{MySQL: &appsv1alpha1.MySQLSpec{}}},
	}
	if err := k8s.Create(ctx, wp); err != nil {
		t.Fatal(err)
	}
	point := &appsv1alpha1.WordPressBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns},
		Spec:       appsv1alpha1.WordPressBackupSpec{WordPressName: "blog", Storage: backuptest.S3Storage()},
	}
	if err := k8s.Create(ctx, point); err != nil {
		t.Fatal(err)
	}
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "broken-content", timeout), resources.ArchiveContainer, backup.Result{Error: "storage: access denied"}, false)
	got := backuptest.WaitRestorePoint(t, k8s, point, metav1.ConditionFalse, timeout)
	if got.Status.Phase != appsv1alpha1.BackupFailed || !strings.Contains(got.Status.Conditions[0].Message, "access denied") {
		t.Errorf("status = %+v", got.Status)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.ReasonBackupFailed)
}
