package kubectlplugin_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
)

func backedUpMySQL(ns, name string) *appsv1alpha1.MySQL {
	return &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1alpha1.MySQLSpec{
		Database: "shop", User: "shop",
		Backup: &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 * * *", Verify: true, Storage: appsv1alpha1.BackupStorage{
			Volume: &appsv1alpha1.VolumeStorage{ClaimName: "backups", Path: "mysql/"}}},
	}}
}

// waitForBackup returns the MySQLBackup the plugin created, once it exists.
func waitForBackup(t *testing.T, ns, name string) *appsv1alpha1.MySQLBackup {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{}
	waitFor(t, ns, name, b)
	return b
}

func complete(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
	return []metav1.Condition{condition(appsv1alpha1.ConditionComplete, status, reason, message)}
}

// setBackupStatus writes the status the operator would: status, with the Ready and Stalled
// conditions it derives from it.
func setBackupStatus(t *testing.T, b *appsv1alpha1.MySQLBackup, status appsv1alpha1.MySQLBackupStatus) {
	t.Helper()
	b.Status = status
	conditions.SetBackupHealth(&b.Status.Conditions, b.Generation)
	setStatus(t, b)
}

// Backup Jobs do not run here (no operator, no kubelet): the test writes the phases the operator
// would, and checks that the plugin created what the operator expects and followed each phase,
// until the backup is Ready: stored, and verified as its policy asks.
func TestBackupCreatesABackupAndFollowsItsPhases(t *testing.T) {
	ns := newNamespace(t, "backup")
	create(t, backedUpMySQL(ns, "db"))

	run := startFollowing(t, "backup", "-n", ns, "mysql/db", "--name", "before-upgrade")
	run.expect(t, "mysqlbackup/before-upgrade created")
	b := waitForBackup(t, ns, "before-upgrade")
	if b.Spec.MySQLName != "db" || b.Spec.Storage != nil || b.Spec.Encryption != nil || b.Spec.Verify != nil || b.Labels[appsv1alpha1.LabelMySQL] != "db" {
		t.Fatalf("the backup's spec %+v and labels %v: want mysqlName db, the policy's storage (none set) and the mysql label", b.Spec, b.Labels)
	}
	run.expect(t, "mysqlbackup/before-upgrade: not yet observed by the operator")

	status := appsv1alpha1.MySQLBackupStatus{Phase: appsv1alpha1.BackupPending, Reason: appsv1alpha1.BackupReasonOnDemand,
		Conditions: complete(metav1.ConditionUnknown, appsv1alpha1.ReasonWaitingForMySQL, "MySQL db is not Available")}
	setBackupStatus(t, b, status)
	run.expect(t, "mysqlbackup/before-upgrade: Pending: WaitingForMySQL: MySQL db is not Available")

	status.Phase = appsv1alpha1.BackupRunning
	status.Conditions = complete(metav1.ConditionUnknown, appsv1alpha1.ReasonBackupRunning, "Job before-upgrade-backup runs")
	setBackupStatus(t, b, status)
	run.expect(t, "mysqlbackup/before-upgrade: Running: BackupRunning: Job before-upgrade-backup runs")

	status.Phase = appsv1alpha1.BackupSucceeded
	status.Size = 48213312
	status.Location = &appsv1alpha1.BackupLocation{Storage: backedUpMySQL(ns, "db").Spec.Backup.Storage, Key: "mysql/backup/db/before-upgrade"}
	status.Conditions = append(complete(metav1.ConditionTrue, appsv1alpha1.ReasonBackupSucceeded, ""),
		condition(appsv1alpha1.ConditionVerified, metav1.ConditionUnknown, appsv1alpha1.ReasonVerificationRunning, "Job before-upgrade-verify runs"))
	setBackupStatus(t, b, status)
	run.expect(t, "mysqlbackup/before-upgrade: Succeeded, 48213312 bytes, verifying")

	status.Verification = appsv1alpha1.VerificationPassed
	status.Conditions[1] = condition(appsv1alpha1.ConditionVerified, metav1.ConditionTrue, appsv1alpha1.ReasonVerificationPassed, "restored and compared")
	setBackupStatus(t, b, status)
	run.expect(t, "mysqlbackup/before-upgrade: Succeeded, 48213312 bytes, verified, at pvc://backups/mysql/backup/db/before-upgrade")
	run.requireExit(t, 0)
}

// A backup that failed, or that was stored but found different from its server by the
// verification its policy asks for, is no good backup: the command fails, saying why.
func TestBackupFailureExitsNonZero(t *testing.T) {
	for _, tt := range []struct {
		name     string
		status   appsv1alpha1.MySQLBackupStatus
		lastLine string
		why      string
	}{
		{"doomed", appsv1alpha1.MySQLBackupStatus{Phase: appsv1alpha1.BackupFailed,
			Conditions: complete(metav1.ConditionFalse, appsv1alpha1.ReasonBackupFailed, "volume backups: no space left on device")},
			"Failed: BackupFailed: volume backups: no space left on device", "BackupFailed: volume backups: no space left on device"},
		{"differs", appsv1alpha1.MySQLBackupStatus{Phase: appsv1alpha1.BackupSucceeded, Verification: appsv1alpha1.VerificationFailed,
			Conditions: append(complete(metav1.ConditionTrue, appsv1alpha1.ReasonBackupSucceeded, ""),
				condition(appsv1alpha1.ConditionVerified, metav1.ConditionFalse, appsv1alpha1.ReasonVerificationFailed, "shop.orders: rows 10 != 9"))},
			"Succeeded, verification failed", "VerificationFailed: shop.orders: rows 10 != 9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t, "backup-"+tt.name)
			create(t, backedUpMySQL(ns, "db"))
			run := startFollowing(t, "backup", "-n", ns, "my/db", "--name", tt.name)
			run.expect(t, "mysqlbackup/"+tt.name+" created")
			setBackupStatus(t, waitForBackup(t, ns, tt.name), tt.status)
			for line := run.next(t); line != "mysqlbackup/"+tt.name+": "+tt.lastLine; line = run.next(t) {
				if line != "mysqlbackup/"+tt.name+": not yet observed by the operator" {
					t.Fatalf("unexpected line %q", line)
				}
			}
			run.requireExit(t, 1)
			if want := "error: mysqlbackup/" + tt.name + ": the backup failed: " + tt.why + "\n"; run.stderr.String() != want {
				t.Errorf("stderr %q, want %q", run.stderr.String(), want)
			}
		})
	}
}

func TestBackupOfAWordPressAndRefusals(t *testing.T) {
	ns := newNamespace(t, "backup-wp")
	create(t, backedUpMySQL(ns, "blog-mysql"),
		&appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blog"}},
		&appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}})

	out := succeeds(t, "backup", "-n", ns, "wp/blog", "--name", "launch", "--wait=false")
	if out != "wordpressbackup/launch created\n" {
		t.Errorf("backup --wait=false printed %q", out)
	}
	wb := &appsv1alpha1.WordPressBackup{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "launch"}, wb); err != nil {
		t.Fatal(err)
	}
	if wb.Spec.WordPressName != "blog" || wb.Spec.Storage != nil || !wb.Spec.Verify {
		t.Errorf("the WordPressBackup's spec %+v: want the site, the policy's storage and its verify", wb.Spec)
	}

	generated := succeeds(t, "backup", "-n", ns, "mysql/blog-mysql", "--wait=false", "-o", "yaml")
	if !containsAll(generated, "kind: MySQLBackup", "name: blog-mysql-2", "mysqlName: blog-mysql") {
		t.Errorf("backup -o yaml:\n%s", generated)
	}

	fails(t, 1, []string{"mysql/plain has no spec.backup, so no storage to back up to"}, "backup", "-n", ns, "mysql/plain")
	fails(t, 1, []string{"mysql/gone in namespace " + ns + ": not found"}, "backup", "-n", ns, "mysql/gone")
	fails(t, 2, []string{"ws/web: only mysql/<name> or wordpress/<name> can be given here"}, "backup", "ws/web")
	list := &appsv1alpha1.MySQLBackupList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 {
		t.Errorf("MySQLBackups after the refusals: %d (%v), want the one made by -o yaml", len(list.Items), err)
	}
}
