package kubectlplugin_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func succeededBackup(t *testing.T, ns, name, mysql string, phase appsv1alpha1.BackupPhase) {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1alpha1.MySQLBackupSpec{MySQLName: mysql}}
	create(t, b)
	b.Status.Phase = phase
	setStatus(t, b)
}

// The restored MySQL's status is written by the test, as the operator would once the backup is
// loaded: the plugin follows it to Ready.
func TestRestoreCreatesACopyFromABackupAndFollowsItToReady(t *testing.T) {
	ns := newNamespace(t, "restore")
	model := backedUpMySQL(ns, "db")
	model.Spec.Image = "mysql:8.4.5"
	model.Spec.Config = []string{"max_connections=200"}
	model.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete
	model.Spec.CredentialsSecretRef = &appsv1alpha1.SecretReference{Name: "db-passwords"}
	create(t, model)
	succeededBackup(t, ns, "nightly", "db", appsv1alpha1.BackupSucceeded)

	run := startFollowing(t, "restore", "-n", ns, "mysql/db", "--from", "nightly", "--to", "db-copy")
	run.expect(t, "mysql/db-copy created from mysqlbackup/nightly")
	restored := &appsv1alpha1.MySQL{}
	waitFor(t, ns, "db-copy", restored)
	s := restored.Spec
	if s.Restore == nil || s.Restore.BackupName != "nightly" || s.Database != "shop" || s.User != "shop" || s.Image != "mysql:8.4.5" ||
		len(s.Config) != 1 || s.Backup != nil || s.CredentialsSecretRef != nil || s.DeletionPolicy != appsv1alpha1.DeletionPolicyRetain {
		t.Fatalf("the copy's spec %+v: want the model's server, database, user and config, restore from nightly, no backup schedule, own credentials, Retain", s)
	}
	run.expect(t, "mysql/db-copy: not yet observed by the operator")

	restored.Status = appsv1alpha1.MySQLStatus{ObservedGeneration: 1, DesiredReplicas: 1,
		Conditions: conditionsWith(notReady("Restoring", "loading MySQLBackup nightly"), nil)}
	setStatus(t, restored)
	run.expect(t, "mysql/db-copy: restoring: loading MySQLBackup nightly")

	// Degraded for a while, as when the pod waits for a node to be added: followed, not fatal.
	unschedulable := condition(appsv1alpha1.ConditionDegraded, isTrue, "Unschedulable", "pod db-copy-0: 0/3 nodes are available: 3 Insufficient memory.")
	restored.Status.Conditions = conditionsWith(notReady("Unschedulable", unschedulable.Message), &unschedulable)
	setStatus(t, restored)
	run.expect(t, "mysql/db-copy: degraded: Unschedulable: pod db-copy-0: 0/3 nodes are available: 3 Insufficient memory.")

	restored.Status.ReadyReplicas = 1
	restored.Status.Restore = &appsv1alpha1.MySQLRestoreStatus{Source: "nightly", CompletionTime: &since}
	restored.Status.Conditions = conditionsWith(readyCondition(), nil)
	setStatus(t, restored)
	run.expect(t, "mysql/db-copy: ready, restored from nightly")
	run.requireExit(t, 0)
}

func TestRestoreBringsALostSiteBackUnderItsName(t *testing.T) {
	ns := newNamespace(t, "restore-wp")
	launch := &appsv1alpha1.WordPressBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "launch"}, Spec: appsv1alpha1.WordPressBackupSpec{WordPressName: "blog"}}
	create(t, launch)
	launch.Status.Phase = appsv1alpha1.BackupSucceeded
	setStatus(t, launch)

	out := succeeds(t, "restore", "-n", ns, "wp/blog", "--from", "launch", "--wait=false")
	if out != "wordpress/blog created from wordpressbackup/launch\n" {
		t.Errorf("restore printed %q", out)
	}
	wp := &appsv1alpha1.WordPress{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog"}, wp); err != nil {
		t.Fatal(err)
	}
	if wp.Spec.Restore == nil || wp.Spec.Restore.BackupName != "launch" || wp.Spec.Database.MySQL == nil {
		t.Errorf("the site's spec %+v: want a restore from launch on a MySQL of its own", wp.Spec)
	}

	// A site on a shared MySQL is copied onto a MySQL of its own, with the shared one's database
	// and user: a restore loads the database into the site's own MySQL.
	shared := backedUpMySQL(ns, "shared")
	shared.Spec.Database, shared.Spec.User = "news", "news"
	create(t, shared, &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "news"}, Spec: appsv1alpha1.WordPressSpec{
		Image: "wordpress:6.8.2-php8.3-apache", Database: appsv1alpha1.WordPressDatabase{MySQLRef: &appsv1alpha1.LocalObjectReference{Name: "shared"}}}})
	succeeds(t, "restore", "-n", ns, "wp/news", "--from", "launch", "--to", "news-copy", "--wait=false")
	cp := &appsv1alpha1.WordPress{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "news-copy"}, cp); err != nil {
		t.Fatal(err)
	}
	if db := cp.Spec.Database; db.MySQLRef != nil || db.MySQL == nil || db.MySQL.Database != "news" || db.MySQL.User != "news" || db.MySQL.Backup != nil ||
		cp.Spec.Image != "wordpress:6.8.2-php8.3-apache" || cp.Spec.Restore == nil || cp.Spec.Restore.BackupName != "launch" {
		t.Errorf("the copy of a site on a shared MySQL: spec %+v, database %+v", cp.Spec, cp.Spec.Database.MySQL)
	}
}

func TestRestoreRefusesToTouchDataOrNames(t *testing.T) {
	ns := newNamespace(t, "restore-refusals")
	create(t, backedUpMySQL(ns, "db"), backedUpMySQL(ns, "taken"),
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-old-0"}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}})
	succeededBackup(t, ns, "nightly", "db", appsv1alpha1.BackupSucceeded)
	succeededBackup(t, ns, "broken", "db", appsv1alpha1.BackupFailed)

	fails(t, 2, []string{"mysql/db exists and a restore never replaces an instance: name the new one with --to"}, "restore", "-n", ns, "mysql/db", "--from", "nightly")
	fails(t, 2, []string{"--from is required"}, "restore", "-n", ns, "mysql/db", "--to", "x")
	fails(t, 1, []string{"mysql/taken already exists"}, "restore", "-n", ns, "mysql/db", "--from", "nightly", "--to", "taken")
	fails(t, 1, []string{"--from: mysqlbackup/missing in namespace " + ns + ": not found"}, "restore", "-n", ns, "mysql/db", "--from", "missing", "--to", "x")
	fails(t, 1, []string{"--from: mysqlbackup/broken in namespace " + ns + " failed"}, "restore", "-n", ns, "mysql/db", "--from", "broken", "--to", "x")
	fails(t, 1, []string{"persistentvolumeclaim/data-old-0 exists", "a restore does not replace data"}, "restore", "-n", ns, "mysql/old", "--from", "nightly")
	list := &appsv1alpha1.MySQLList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil || len(list.Items) != 2 {
		t.Errorf("MySQLs after the refusals: %d (%v), want the two made by the test", len(list.Items), err)
	}
}

func TestRestoreEndsWhenItsSourceCannotBeRestored(t *testing.T) {
	ns := newNamespace(t, "restore-stuck")
	succeededBackup(t, ns, "nightly", "db", appsv1alpha1.BackupRunning)
	run := startFollowing(t, "restore", "-n", ns, "mysql/db", "--from", "nightly", "--database", "shop", "--user", "shop")
	run.expect(t, "mysql/db created from mysqlbackup/nightly (the backup is Running: the restore waits for it to succeed)")
	restored := &appsv1alpha1.MySQL{}
	waitFor(t, ns, "db", restored)
	if restored.Spec.Database != "shop" || restored.Spec.User != "shop" {
		t.Errorf("a MySQL made without a model: spec %+v, want --database and --user", restored.Spec)
	}
	failed := condition(appsv1alpha1.ConditionDegraded, isTrue, appsv1alpha1.ReasonRestoreSourceNotReady, "spec.restore.backupName: MySQLBackup nightly failed")
	restored.Status = appsv1alpha1.MySQLStatus{ObservedGeneration: 1, DesiredReplicas: 1, Conditions: conditionsWith(notReady(failed.Reason, failed.Message), &failed)}
	setStatus(t, restored)
	run.requireExit(t, 1)
	want := "error: mysql/db: the restore cannot go on: spec.restore.backupName: MySQLBackup nightly failed (the instance stays as it is: delete it to try again)\n"
	if run.stderr.String() != want {
		t.Errorf("stderr %q, want %q", run.stderr.String(), want)
	}
}
