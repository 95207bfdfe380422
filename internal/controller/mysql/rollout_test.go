package mysql

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// TestRolledBackTargetBuildsTheGoodServer checks that podFields takes every field that makes the
// pod and my.cnf from the good spec, so that a rollback rebuilds them exactly, and nothing else.
func TestRolledBackTargetBuildsTheGoodServer(t *testing.T) {
	good := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: appsv1alpha1.MySQLSpec{Image: "mysql:8.4.6", Database: "shop", User: "shop", Config: []string{"max_connections=200"},
			Storage: appsv1alpha1.Storage{Size: resource.MustParse("10Gi")}},
	}
	spec := good.Spec
	spec.Image, spec.Config = "mysql:9.1.0", []string{"innodb_no_such_option=1"}
	spec.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}
	spec.NodeSelector, spec.Tolerations, spec.Affinity = map[string]string{"disk": "ssd"}, []corev1.Toleration{{Key: "db"}}, &corev1.Affinity{}
	spec.Storage.Size = resource.MustParse("20Gi")
	spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete
	spec.Upgrade.ProgressDeadlineSeconds = ptr.To[int32](60)
	d := rollout.Decision{RollBack: true, Status: appsv1alpha1.RolloutStatus{
		LastGood: &appsv1alpha1.GoodRevision{Name: revision(good).Name, Spec: rollout.Snapshot(good.Spec)},
	}}
	target := good.DeepCopy()
	var err error
	if target.Spec, err = rollout.Target(d, spec, podFields); err != nil {
		t.Fatal(err)
	}
	if got, want := revision(target).Name, revision(good).Name; got != want {
		t.Errorf("the rolled back server is revision %s, want the good %s", got, want)
	}
	if resources.MyCnf(target) != resources.MyCnf(good) {
		t.Errorf("my.cnf = %q, want the good %q", resources.MyCnf(target), resources.MyCnf(good))
	}
	if size := target.Spec.Storage.Size; size.Cmp(resource.MustParse("20Gi")) != 0 || target.Spec.DeletionPolicy != appsv1alpha1.DeletionPolicyDelete ||
		*target.Spec.Upgrade.ProgressDeadlineSeconds != 60 {
		t.Errorf("storage/deletion policy/deadline = %s/%s/%d, want the spec's", size.String(), target.Spec.DeletionPolicy, *target.Spec.Upgrade.ProgressDeadlineSeconds)
	}
}

func TestPreUpgradeBackup(t *testing.T) {
	at := func(sec int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC)) }
	backup := func(name, from, to string, phase appsv1alpha1.BackupPhase, created metav1.Time) appsv1alpha1.MySQLBackup {
		return appsv1alpha1.MySQLBackup{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: created,
				Annotations: map[string]string{AnnotationUpgradeFrom: from, AnnotationUpgradeTo: to}},
			Status: appsv1alpha1.MySQLBackupStatus{Phase: phase},
		}
	}
	backups := []appsv1alpha1.MySQLBackup{
		backup("older", "mysql:8.4.6", "mysql:9.1.0", appsv1alpha1.BackupSucceeded, at(1)),
		backup("newer", "mysql:8.4.6", "mysql:9.1.0", appsv1alpha1.BackupSucceeded, at(2)),
		backup("failed", "mysql:8.4.6", "mysql:9.1.0", appsv1alpha1.BackupFailed, at(3)),
		backup("other", "mysql:8.0.40", "mysql:8.4.6", appsv1alpha1.BackupSucceeded, at(4)),
		{ObjectMeta: metav1.ObjectMeta{Name: "scheduled", CreationTimestamp: at(5)}, Status: appsv1alpha1.MySQLBackupStatus{Phase: appsv1alpha1.BackupSucceeded}},
	}
	for _, tt := range []struct{ from, to, want string }{
		{"mysql:8.4.6", "mysql:9.1.0", "newer"},
		{"mysql:8.4.6", "mysql:8.4.6", ""},
		{"mysql:8.4.7", "mysql:9.1.0", ""},
	} {
		if got := preUpgradeBackup(backups, tt.from, tt.to); got != tt.want {
			t.Errorf("preUpgradeBackup(%s → %s) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestRollbackRefusal(t *testing.T) {
	failed := &appsv1alpha1.FailedRevision{Name: "bad", Image: "mysql:9.1.0", Reason: appsv1alpha1.ReasonCrashLoopBackOff, Backup: "db-pre-upgrade"}
	good := &appsv1alpha1.GoodRevision{Name: "good", Image: "mysql:8.4.6"}
	for _, tt := range []struct {
		data, restoring string
		refused         bool
	}{
		{"", "mysql:8.4.6", false},            // nothing recorded
		{"mysql:8.4.6", "mysql:8.4.6", false}, // the failed server recorded nothing
		{"mysql:8.4.7", "mysql:8.4.6", false}, // a patch release reads the same data files
		{"mysql:9.1.0", "mysql:8.4.6", true},
		{"mysql:9.1.0", "mysql:latest", false}, // no version to compare
	} {
		msg := rollbackRefusal(failed, good, tt.data, tt.restoring)
		if (msg != "") != tt.refused {
			t.Errorf("data %q, restoring %s: refusal %q, want refused %v", tt.data, tt.restoring, msg, tt.refused)
		}
		if tt.refused && (!strings.Contains(msg, tt.data) || !strings.Contains(msg, "db-pre-upgrade") || !strings.Contains(msg, "CrashLoopBackOff")) {
			t.Errorf("refusal %q, want it to name the recorded image, the failure and the backup", msg)
		}
	}
}
