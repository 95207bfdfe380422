//go:build real

package real

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func TestMySQLKeepsItsDataAndAccounts(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "mysql", restricted)
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
  config:
    - max_connections=77
`, mariadbImage)
	created := time.Now()
	kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	took := waitMySQL(t, ns, created)
	t.Logf("pod start latency: MySQL Available %s after it was created (first initialisation included)", took)

	m := &appsv1alpha1.MySQL{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shop"}, m); err != nil {
		t.Fatal(err)
	}
	if m.Spec.DeletionPolicy != appsv1alpha1.DeletionPolicyRetain {
		t.Fatalf("deletionPolicy defaults to %q, want Retain", m.Spec.DeletionPolicy)
	}
	secret := secretData(t, ns, m.SecretName())
	if secret[appsv1alpha1.SecretKeyUser] != "clerk" || secret[appsv1alpha1.SecretKeyDatabase] != "orders" || secret[appsv1alpha1.SecretKeyPassword] == "" {
		t.Fatalf("credentials Secret %s: user %q database %q, password set %t", m.SecretName(),
			secret[appsv1alpha1.SecretKeyUser], secret[appsv1alpha1.SecretKeyDatabase], secret[appsv1alpha1.SecretKeyPassword] != "")
	}
	serviceIP := clusterIP(t, ns, "shop")
	db := sqlClient{t: t, ns: ns, pod: clientPod(t, ns, "sql", mariadbImage, appsv1alpha1.MySQLUser)}
	user := account{host: serviceIP, user: "clerk", password: secret[appsv1alpha1.SecretKeyPassword], database: "orders"}

	if got := db.query(user, "SELECT CURRENT_USER(), DATABASE()"); got != "clerk@%\torders" {
		t.Errorf("connected as %q, want clerk@%% on orders", got)
	}
	if got := db.query(user, "SHOW VARIABLES LIKE 'max_connections'"); got != "max_connections\t77" {
		t.Errorf("max_connections: %q, want 77 from spec.config", got)
	}
	// The Service name the Secret gives works as well as the address.
	byName := user
	byName.host = secret[appsv1alpha1.SecretKeyHost]
	db.query(byName, "CREATE TABLE IF NOT EXISTS items (id INT PRIMARY KEY, name VARCHAR(32)); INSERT IGNORE INTO items VALUES (1, 'apple'), (2, 'pear'), (3, 'plum')")
	const rows = "1\tapple\n2\tpear\n3\tplum"
	if got := db.query(user, "SELECT id, name FROM items ORDER BY id"); got != rows {
		t.Fatalf("rows written: %q", got)
	}

	t.Run("rows survive the pod", func(t *testing.T) {
		old := getPod(t, ns, "shop-0")
		deleted := time.Now()
		if err := k8s.Delete(context.Background(), old); err != nil {
			t.Fatal(err)
		}
		await.Eventually(t, timeout, func(ctx context.Context) error {
			pod := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(old), pod); err != nil {
				return err
			}
			if pod.UID == old.UID {
				return fmt.Errorf("pod %s not replaced yet", pod.Name)
			}
			return podServing(pod, mariadbImage)
		})
		waitMySQL(t, ns, deleted)
		t.Logf("MySQL back on its volume %s after its pod was deleted", time.Since(deleted).Round(time.Millisecond))
		if got := db.query(user, "SELECT id, name FROM items ORDER BY id"); got != rows {
			t.Errorf("rows after the pod was replaced: %q, want %q", got, rows)
		}
	})

	t.Run("rows and password survive the MySQL", func(t *testing.T) {
		claim := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: m.DataClaimName()}, claim); err != nil {
			t.Fatal(err)
		}
		kubectl(t, "", "delete", "-n", ns, "mysql", "shop")
		await.Eventually(t, timeout, func(ctx context.Context) error {
			for name, obj := range map[string]client.Object{"shop": &appsv1.StatefulSet{}, "shop-0": &corev1.Pod{}} {
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err == nil {
					return fmt.Errorf("%T %s still there", obj, name)
				} else if !apierrors.IsNotFound(err) {
					return err
				}
			}
			return nil
		})
		kept := &corev1.PersistentVolumeClaim{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(claim), kept); err != nil || kept.UID != claim.UID {
			t.Fatalf("data claim after the MySQL was deleted: %v, uid %s, want %s kept", err, kept.UID, claim.UID)
		}
		recreated := time.Now()
		kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
		took := waitMySQL(t, ns, recreated)
		t.Logf("MySQL re-created on its kept volume Available %s after it was created", took)
		if again := secretData(t, ns, m.SecretName()); again[appsv1alpha1.SecretKeyPassword] != user.password ||
			again[appsv1alpha1.SecretKeyRootPassword] != secret[appsv1alpha1.SecretKeyRootPassword] {
			t.Errorf("the re-created MySQL's Secret holds other passwords")
		}
		user.host = clusterIP(t, ns, "shop")
		if got := db.query(user, "SELECT id, name FROM items ORDER BY id"); got != rows {
			t.Errorf("rows after the MySQL was re-created: %q, want %q", got, rows)
		}
	})

	t.Run("root is refused from another pod", func(t *testing.T) {
		root := account{host: clusterIP(t, ns, "shop"), user: "root", password: secret[appsv1alpha1.SecretKeyRootPassword]}
		out, err := db.run(root, "SELECT 1")
		if err == nil {
			t.Fatalf("root connected from another pod: %q", out)
		}
		if !strings.Contains(out, "Access denied") && !strings.Contains(out, "is not allowed to connect") {
			t.Errorf("root from another pod failed for another reason: %s", out)
		}
	})
}

// waitMySQL waits until the MySQL shop is Available, its pod Running and Ready, and returns the
// time since since.
func waitMySQL(t *testing.T, ns string, since time.Time) time.Duration {
	t.Helper()
	took := waitAvailable(t, ns, "MySQL", "shop", since)
	waitPods(t, ns, (&appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}).SelectorLabels(), 1, mariadbImage)
	return took
}

// account is where and as whom a client connects.
type account struct{ host, user, password, database string }

// sqlClient runs the mysql client in a pod of the namespace, as another application would.
type sqlClient struct {
	t       *testing.T
	ns, pod string
}

// query runs statements as a and returns the rows, tab-separated, without column names.
func (c sqlClient) query(a account, statements string) string {
	c.t.Helper()
	var out string
	// A Service whose endpoint has just changed may refuse the first connections.
	await.Eventually(c.t, time.Minute, func(context.Context) error {
		var err error
		if out, err = c.run(a, statements); err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	})
	return strings.TrimSpace(out)
}

func (c sqlClient) run(a account, statements string) (string, error) {
	args := []string{"exec", "-n", c.ns, c.pod, "--", "env", "MYSQL_PWD=" + a.password,
		"mysql", "--protocol=TCP", "-h", a.host, "-u", a.user, "--batch", "--skip-column-names", "-e", statements}
	if a.database != "" {
		args = append(args, a.database)
	}
	return runKubectl("", args...)
}

func secretData(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	secret := &corev1.Secret{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, secret); err != nil {
		t.Fatal(err)
	}
	data := map[string]string{}
	for k, v := range secret.Data {
		data[k] = string(v)
	}
	return data
}

func clusterIP(t *testing.T, ns, name string) string {
	t.Helper()
	svc := &corev1.Service{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}
