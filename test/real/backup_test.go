//go:build real

package real

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// The rows every backup and restore is checked with: a non-ASCII string, NULLs and a blob of
// several megabytes, in two tables.
const (
	seedRows = `CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(64) CHARACTER SET utf8mb4, note TEXT NULL);
INSERT INTO items VALUES (1, 'Grüße — 日本語 ✓', NULL), (2, 'pear', 'ripe'), (3, 'plum', NULL);
CREATE TABLE files (id INT PRIMARY KEY, body LONGBLOB);
INSERT INTO files VALUES (1, REPEAT(UNHEX('00FF7F80'), 1048576));`
	checkRows = "SELECT COUNT(*), GROUP_CONCAT(name ORDER BY id SEPARATOR '|'), (SELECT MD5(body) FROM files WHERE id = 1) FROM items"
)

func TestMySQLBackupsRestoreOnARealNode(t *testing.T) {
	t.Parallel()
	store := testcluster.StartObjectStore(t, cluster.NodeAddress(), nil)
	ns := newNamespace(t, "backup", restricted)
	createS3Keys(t, ns, store)
	kubectl(t, "", "create", "secret", "generic", "-n", ns, "backup-key", "--from-literal=passphrase=correct horse battery staple")
	manifest := fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: shop
spec:
  image: %s
  database: orders
  user: clerk
  storage: {size: 1Gi}
  backup:
    schedule: "* * * * *"
    suspend: true
    verify: true
    storage:
      s3: {endpoint: %q, bucket: %s, prefix: prod/, forcePathStyle: true, credentialsSecretRef: {name: s3-keys}}
    encryption:
      keySecretRef: {name: backup-key, key: passphrase}
    retention: {keepLast: 1}
`, mariadbImage, store.Endpoint, store.Bucket)
	created := time.Now()
	kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	waitAvailable(t, ns, "MySQL", "shop", created)
	db := sqlClient{t: t, ns: ns, pod: clientPod(t, ns, "sql", mariadbImage, appsv1alpha1.MySQLUser)}
	secret := secretData(t, ns, "shop-credentials")
	clerk := account{host: clusterIP(t, ns, "shop"), user: "clerk", password: secret[appsv1alpha1.SecretKeyPassword], database: "orders"}
	db.query(clerk, seedRows)
	want := db.query(clerk, checkRows)

	t.Run("an on-demand backup is taken and verified", func(t *testing.T) {
		started := time.Now()
		// As a user takes one: the kubectl plugin follows it until it is stored and verified.
		out := kubectlAppkeeper(t, "backup", "mysql/shop", "-n", ns, "--name", "manual", "--timeout", timeout.String())
		t.Logf("kubectl appkeeper backup mysql/shop --name manual:\n%s", out)
		if lines := strings.Split(strings.TrimSpace(out), "\n"); !strings.Contains(lines[len(lines)-1], ", verified, at s3://") {
			t.Errorf("the plugin's last line %q, want the backup verified and where it is stored", lines[len(lines)-1])
		}
		b := waitBackup(t, ns, "manual", true)
		t.Logf("backup: %d bytes, %d tables, server %s, succeeded %s and verified %s after it was created",
			b.Status.Size, b.Status.Tables, b.Status.ServerVersion, b.Status.CompletionTime.Sub(started).Round(time.Second),
			b.Status.VerificationTime.Sub(started).Round(time.Second))
		if !b.Status.Encrypted || b.Status.Tables != 2 || !strings.HasPrefix(b.Status.ServerVersion, "10.11") {
			t.Errorf("status: encrypted %t, tables %d, server %q", b.Status.Encrypted, b.Status.Tables, b.Status.ServerVersion)
		}
		objects := store.Objects(t)
		for _, key := range []string{"prod/" + ns + "/shop/manual.sql.gz.age", "prod/" + ns + "/shop/manual.json"} {
			if !slices.Contains(objects, key) {
				t.Errorf("bucket holds %v, want %s", objects, key)
			}
		}
		out = kubectl(t, "", "get", "mysqlbackup", "-n", ns, "manual")
		for _, column := range []string{"Succeeded", "Verified", "shop"} {
			if !strings.Contains(out, column) {
				t.Errorf("kubectl get mysqlbackup does not show %s:\n%s", column, out)
			}
		}
	})

	t.Run("scheduled backups keep the newest", func(t *testing.T) {
		kubectl(t, "", "patch", "mysql", "-n", ns, "shop", "--type=merge", "-p", `{"spec":{"backup":{"suspend":false}}}`)
		// keepLast 1 keeps the newest verified backup until a newer one is verified: the third
		// scheduled run prunes the first.
		began := time.Now()
		await.WantEvents(t, k8s, ns, 5*time.Minute, appsv1alpha1.ReasonBackupPruned)
		t.Logf("a scheduled backup pruned an older one %s after the schedule was resumed", time.Since(began).Round(time.Second))
		kubectl(t, "", "patch", "mysql", "-n", ns, "shop", "--type=merge", "-p", `{"spec":{"backup":{"suspend":true}}}`)
		// The pruned backup's artifact is gone from the bucket; the manual one, the user's, stays.
		await.Eventually(t, time.Minute, func(context.Context) error {
			var artifacts []string
			for _, key := range store.Objects(t) {
				if strings.HasSuffix(key, ".json") {
					artifacts = append(artifacts, key)
				}
			}
			live := backupsOf(context.Background(), t, ns, "shop", "")
			if len(artifacts) != len(live) {
				return fmt.Errorf("manifests in the bucket %v, backups %d", artifacts, len(live))
			}
			return nil
		})
	})

	t.Run("an image change waits for its backup", func(t *testing.T) {
		newer := strings.Replace(mariadbImage, ":10.11", ":10.12", 1)
		if err := cluster.TagImage(context.Background(), mariadbImage, newer); err != nil {
			t.Fatal(err)
		}
		kubectl(t, "", "patch", "mysql", "-n", ns, "shop", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"image":%q}}`, newer))
		var guard string
		await.Eventually(t, timeout, func(ctx context.Context) error {
			m := &appsv1alpha1.MySQL{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, m); err != nil {
				return err
			}
			if m.Status.Backup == nil || m.Status.Backup.PreUpgradeBackup == "" {
				return fmt.Errorf("no pre-upgrade backup yet")
			}
			guard = m.Status.Backup.PreUpgradeBackup
			return nil
		})
		// Until the backup succeeded, the server keeps its image. The StatefulSet is read first:
		// a backup read before it could succeed, and let the image through, between the reads.
		await.Eventually(t, timeout, func(ctx context.Context) error {
			sts := &appsv1.StatefulSet{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, sts); err != nil {
				return err
			}
			b := &appsv1alpha1.MySQLBackup{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: guard}, b); err != nil {
				return err
			}
			image := sts.Spec.Template.Spec.Containers[0].Image
			if b.Status.Phase != appsv1alpha1.BackupSucceeded {
				if image != mariadbImage {
					t.Fatalf("the StatefulSet runs %s while the pre-upgrade backup is %q", image, b.Status.Phase)
				}
				return fmt.Errorf("pre-upgrade backup %s is %q", guard, b.Status.Phase)
			}
			if image != newer {
				return fmt.Errorf("the StatefulSet still runs %s after the backup succeeded", image)
			}
			return nil
		})
		waitAvailable(t, ns, "MySQL", "shop", time.Now())
		if got := db.query(clerk, checkRows); got != want {
			t.Errorf("rows after the upgrade: %q, want %q", got, want)
		}
	})

	t.Run("a new MySQL restored from the backup serves the rows with its own credentials", func(t *testing.T) {
		kubectl(t, "", "delete", "mysql", "-n", ns, "shop", "--wait=true")
		kubectl(t, "", "delete", "pvc", "-n", ns, "data-shop-0", "--wait=true")
		created := time.Now()
		kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: copy
spec:
  image: %s
  database: orders
  user: clerk
  storage: {size: 1Gi}
  restore: {backupName: manual}
`, mariadbImage), "apply", "-n", ns, "-f", "-")
		took := waitAvailable(t, ns, "MySQL", "copy", created)
		t.Logf("restored MySQL Available %s after it was created", took.Round(time.Second))
		fresh := secretData(t, ns, "copy-credentials")
		if fresh[appsv1alpha1.SecretKeyPassword] == clerk.password {
			t.Fatal("the restored MySQL has the old password: it was to make its own")
		}
		restored := account{host: clusterIP(t, ns, "copy"), user: "clerk", password: fresh[appsv1alpha1.SecretKeyPassword], database: "orders"}
		if got := db.query(restored, checkRows); got != want {
			t.Errorf("restored rows: %q, want %q", got, want)
		}
		m := &appsv1alpha1.MySQL{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "copy"}, m); err != nil {
			t.Fatal(err)
		}
		if m.Status.Restore == nil || !strings.Contains(m.Status.Restore.Source, "manual") || m.Status.Restore.CompletionTime == nil {
			t.Errorf("status.restore = %+v, want it to name manual and be complete", m.Status.Restore)
		}
	})

	t.Run("a backup to a volume claim restores too", func(t *testing.T) {
		kubectl(t, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: backups
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQLBackup
metadata:
  name: to-volume
spec:
  mysqlName: copy
  verify: true
  storage:
    volume: {claimName: backups, path: mysql/}
`, "apply", "-n", ns, "-f", "-")
		b := waitBackup(t, ns, "to-volume", true)
		if b.Status.Location == nil || b.Status.Location.Key != "mysql/"+ns+"/copy/to-volume" || b.Status.Encrypted {
			t.Errorf("status.location = %+v, encrypted %t", b.Status.Location, b.Status.Encrypted)
		}
	})
}

// createS3Keys creates the Secret s3-keys with store's access keys, as a user gives a backup its
// credentials.
func createS3Keys(t *testing.T, ns string, store *testcluster.ObjectStore) {
	t.Helper()
	kubectl(t, "", "create", "secret", "generic", "-n", ns, "s3-keys",
		"--from-literal="+appsv1alpha1.SecretKeyAccessKeyID+"="+store.AccessKey,
		"--from-literal="+appsv1alpha1.SecretKeySecretAccessKey+"="+store.SecretKey)
}

// waitBackup waits until the backup succeeded and, when verify, passed verification.
func waitBackup(t *testing.T, ns, name string, verify bool) *appsv1alpha1.MySQLBackup {
	t.Helper()
	b := &appsv1alpha1.MySQLBackup{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, b); err != nil {
			return err
		}
		switch {
		case b.Status.Phase == appsv1alpha1.BackupFailed:
			t.Fatalf("backup %s failed: %v", name, b.Status.Conditions)
		case b.Status.Verification == appsv1alpha1.VerificationFailed:
			t.Fatalf("backup %s failed verification: %v", name, b.Status.Conditions)
		case b.Status.Phase != appsv1alpha1.BackupSucceeded:
			return fmt.Errorf("backup %s is %q: %v", name, b.Status.Phase, b.Status.Conditions)
		case verify && b.Status.Verification != appsv1alpha1.VerificationPassed:
			return fmt.Errorf("backup %s not verified yet: %v", name, b.Status.Conditions)
		}
		return nil
	})
	return b
}

// backupsOf lists the backups of the MySQL mysql taken for reason, or all of them.
func backupsOf(ctx context.Context, t *testing.T, ns, mysql, reason string) []appsv1alpha1.MySQLBackup {
	t.Helper()
	list := &appsv1alpha1.MySQLBackupList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []appsv1alpha1.MySQLBackup
	for _, b := range list.Items {
		if b.Spec.MySQLName == mysql && (reason == "" || b.Status.Reason == reason) {
			out = append(out, b)
		}
	}
	return out
}
