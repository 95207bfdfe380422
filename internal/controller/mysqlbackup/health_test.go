package mysqlbackup_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
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

// Flux, like every tool built on kstatus, and kubectl wait --for=condition=Ready judge a backup by
// Ready and Stalled: it must not read as done while it waits for its MySQL, runs or is being
// verified, and must read as failed when it or its verification failed.
func TestGitOpsToolsReadTheHealthOfAMySQLBackup(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	early := backupObject(ns, "early")
	createBackup(t, ns, "early", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = backuptest.S3Storage() })
	await.RequireHealth(t, k8s, early, status.InProgressStatus)
	backuptest.WaitBackup(t, k8s, ns, "early", timeout, backuptest.PhaseIs(appsv1alpha1.BackupPending))
	requireReady(t, ns, "early", metav1.ConditionFalse, appsv1alpha1.ReasonWaitingForMySQL)
	await.RequireHealth(t, k8s, early, status.InProgressStatus)

	availableMySQL(t, ns, "db", nil)
	backuptest.WaitBackup(t, k8s, ns, "early", timeout, backuptest.PhaseIs(appsv1alpha1.BackupRunning))
	requireReady(t, ns, "early", metav1.ConditionFalse, appsv1alpha1.ReasonBackupRunning)
	await.RequireHealth(t, k8s, early, status.InProgressStatus)
	wait := startKubectl(t, "wait", "-n", ns, "mybak/early", "--for=condition=Ready", "--timeout=20s")
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "early-backup", timeout), dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/early"), true)
	await.WaitForHealth(t, k8s, early, status.CurrentStatus, timeout)
	requireReady(t, ns, "early", metav1.ConditionTrue, appsv1alpha1.ReasonAsExpected)
	wait()

	// Asked for, the verification is part of the backup: Ready waits for its verdict.
	checked := backupObject(ns, "checked")
	createBackup(t, ns, "checked", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage, b.Spec.Verify = backuptest.S3Storage(), verified })
	await.RequireHealth(t, k8s, checked, status.InProgressStatus)
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "checked-backup", timeout), dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/checked"), true)
	backuptest.WaitBackup(t, k8s, ns, "checked", timeout, backuptest.PhaseIs(appsv1alpha1.BackupSucceeded))
	requireReady(t, ns, "checked", metav1.ConditionFalse, appsv1alpha1.ReasonVerificationRunning)
	await.RequireHealth(t, k8s, checked, status.InProgressStatus)
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "checked-verify", timeout), verifyContainer, backup.Result{Verified: verified}, true)
	await.WaitForHealth(t, k8s, checked, status.CurrentStatus, timeout)

	broken := backupObject(ns, "broken")
	createBackup(t, ns, "broken", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage = backuptest.S3Storage() })
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "broken-backup", timeout), dumpContainer, backup.Result{Error: "storage: bucket backups does not exist"}, false)
	requireFailed(t, broken, appsv1alpha1.ReasonBackupFailed, "bucket backups does not exist")
	startKubectl(t, "wait", "-n", ns, "mybak/broken", "--for=condition=Stalled", "--timeout=20s")()
	table := startKubectl(t, "get", "mysqlbackups", "-n", ns)()
	for _, want := range []string{`(?m)^NAME +MYSQL +PHASE +TRIGGER +SIZE +VERIFIED +COMPLETED +READY +REASON +AGE$`,
		`(?m)^early +db +Succeeded +OnDemand +123456 +\S+ +True +AsExpected +\S+$`,
		`(?m)^broken +db +Failed +OnDemand +\S+ +False +BackupFailed +\S+$`} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("kubectl get mysqlbackups lacks %s:\n%s", want, table)
		}
	}

	corrupt := backupObject(ns, "corrupt")
	createBackup(t, ns, "corrupt", func(b *appsv1alpha1.MySQLBackup) { b.Spec.Storage, b.Spec.Verify = backuptest.S3Storage(), verified })
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "corrupt-backup", timeout), dumpContainer, backuptest.DumpResult("prod/"+ns+"/db/corrupt"), true)
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "corrupt-verify", timeout), verifyContainer,
		backup.Result{Verified: notVerified, Mismatches: []string{"shop.orders: rows 10 != 9"}}, true)
	requireFailed(t, corrupt, appsv1alpha1.ReasonVerificationFailed, "shop.orders")
}

// A restore point reads the same way; with verify, it is Ready once its database dump passed.
func TestGitOpsToolsReadTheHealthOfAWordPressBackup(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "bak")
	ctx := context.Background()
	backuptest.RunningSite(t, k8s, ns, timeout)

	point := &appsv1alpha1.WordPressBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "launch", Namespace: ns},
		Spec:       appsv1alpha1.WordPressBackupSpec{WordPressName: "blog", Verify: true},
	}
	if err := k8s.Create(ctx, point); err != nil {
		t.Fatal(err)
	}
	await.RequireHealth(t, k8s, point, status.InProgressStatus)
	content := backuptest.WaitJob(t, k8s, ns, "launch-content", timeout)
	await.RequireHealth(t, k8s, point, status.InProgressStatus)
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "launch-db-backup", timeout), dumpContainer, backuptest.DumpResult("prod/"+ns+"/blog-mysql/launch-db"), true)
	kubesim.FinishJob(t, k8s, content, resources.ArchiveContainer, backup.Result{Key: "prod/" + ns + "/blog/launch", Size: 2048, SHA256: "cd34", Files: 12, Bytes: 40960}, true)
	backuptest.WaitRestorePoint(t, k8s, point, metav1.ConditionTrue, timeout)
	await.RequireHealth(t, k8s, point, status.InProgressStatus)
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "launch-db-verify", timeout), verifyContainer, backup.Result{Verified: verified}, true)
	await.WaitForHealth(t, k8s, point, status.CurrentStatus, timeout)

	broken := &appsv1alpha1.WordPressBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns},
		Spec:       appsv1alpha1.WordPressBackupSpec{WordPressName: "blog"},
	}
	if err := k8s.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	kubesim.FinishJob(t, k8s, backuptest.WaitJob(t, k8s, ns, "broken-content", timeout), resources.ArchiveContainer, backup.Result{Error: "storage: access denied"}, false)
	requireFailed(t, broken, appsv1alpha1.ReasonBackupFailed, "access denied")
}

// startKubectl starts kubectl with args, as a person would run it; the function it returns waits
// for it to succeed and gives its output.
func startKubectl(t *testing.T, args ...string) func() string {
	t.Helper()
	cmd := testenv.Kubectl(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() string {
		t.Helper()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
}

func backupObject(ns, name string) *appsv1alpha1.MySQLBackup {
	return &appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
}

// requireReady fails the test unless the backup's Ready condition, as the API server has it now,
// has status and reason, with a message.
func requireReady(t *testing.T, ns, name string, want metav1.ConditionStatus, reason string) {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(b.Status.Conditions, appsv1alpha1.ConditionReady)
	if c == nil || c.Status != want || c.Reason != reason || c.Message == "" || c.ObservedGeneration != b.Generation {
		t.Errorf("Ready of %s = %+v, want %s %s with a message, at generation %d", name, c, want, reason, b.Generation)
	}
}

// requireFailed waits until kstatus reads obj as Failed, with the reason of its Stalled condition
// and a message that tells why.
func requireFailed(t *testing.T, obj client.Object, reason, why string) {
	t.Helper()
	await.WaitForHealth(t, k8s, obj, status.FailedStatus, timeout)
	got, err := await.Health(context.Background(), k8s, obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Conditions) != 1 || got.Conditions[0].Reason != reason || !strings.Contains(got.Message, why) {
		t.Errorf("kstatus: %s %q %+v, want Stalled %s saying %q", got.Status, got.Message, got.Conditions, reason, why)
	}
}
