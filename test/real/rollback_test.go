//go:build real

package real

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

// progressDeadline is the progress deadline of every scenario here. A revision that crash-loops
// is rolled back as soon as the kubelet reports the back-off, long before it; for a single server,
// whose Service has nobody to answer while the failed pod runs, it bounds the outage.
const progressDeadline = 60 * time.Second

// outageMargin is what recovery may take after the deadline: the restored pod's start and its
// readiness probe.
const outageMargin = 30 * time.Second

// The reasons a rollback gives for a failed revision, as the kubelet reports them: a container
// that exits is in back-off at its second exit, told by its cause when its log names one (mysqld
// refusing an option); a pull fails first with ErrImagePull, then waits in ImagePullBackOff, and
// the operator acts on whichever it reads first.
var (
	crashLoop  = []string{appsv1alpha1.ReasonCrashLoopBackOff}
	badConfig  = []string{appsv1alpha1.ReasonBadConfiguration}
	pullFailed = []string{appsv1alpha1.ReasonErrImagePull, appsv1alpha1.ReasonImagePullBackOff}
)

func TestWebServerRollsBackImagesThatFail(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "rollback-web", restricted)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata:
  name: web
spec:
  image: %s
  replicas: 2
  upgrade: {progressDeadlineSeconds: %d}
`, nginxImage, int(progressDeadline.Seconds())), "apply", "-n", ns, "-f", "-")
	waitAvailable(t, ns, "WebServer", "web", created)
	serving := waitWebServer(t, ns, 2, nginxImage)
	requireAnswers(t, serviceURL(t, ns, "web"), serving)

	t.Run("an image that cannot start", func(t *testing.T) {
		failWebServer(t, ns, serving, rollback{1, crashLoop, cluster.BrokenImage(), nginxImage})
	})
	t.Run("an image that cannot be pulled", func(t *testing.T) {
		// A tag that was never pushed, the commonest failed upgrade: the node has no such image
		// and no registry has it.
		missing := strings.Replace(nginxImage, ":1.22", ":no-such-tag", 1)
		failWebServer(t, ns, serving, rollback{2, pullFailed, missing, nginxImage})
	})
}

// failWebServer upgrades the WebServer web, serving with pods, to want's failed image and requires
// it to roll back to them by itself while its Service answers.
func failWebServer(t *testing.T, ns string, serving []corev1.Pod, want rollback) {
	t.Helper()
	service := serviceURL(t, ns, "web")
	counted := testenv.Rollbacks(t, "WebServer")
	e := startEpisode(t, "WebServer", ns, (&appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web"}}).SelectorLabels(),
		deploymentOf("web"), func(ctx context.Context) error {
			body, err := httpGet(ctx, service)
			if err == nil && !strings.Contains(body, welcome) {
				err = fmt.Errorf("answer without %q", welcome)
			}
			return err
		})
	kubectl(t, "", "patch", "-n", ns, "webserver", "web", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"image":%q}}`, want.failedImage))
	e.waitRolledBack(t, progressDeadline)
	e.waitAvailable(t, ns, "web", 3*time.Second)
	failures, _ := e.finish(t)

	// The Deployment surges one new pod and removes an old one only once a new one is available,
	// which never happens: both old pods serve throughout, and the failed pod, never Ready, gets
	// no traffic. A failed request can only be the host's own hiccup, under load.
	if len(failures) > 2 {
		t.Errorf("%d requests failed while the old pods kept serving, want at most 2", len(failures))
	}
	after := waitWebServer(t, ns, 2, want.goodImage)
	if !samePods(serving, after) {
		t.Errorf("pods %v were replaced by %v: the old revision's pods were to keep serving", podNames(serving), podNames(after))
	}
	rolledBack(t, ns, "WebServer", "web", counted, want)
	ws := &appsv1alpha1.WebServer{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, ws); err != nil {
		t.Fatal(err)
	}
	if ws.Spec.Image != want.failedImage {
		t.Errorf("spec.image is %s, want the user's %s kept", ws.Spec.Image, want.failedImage)
	}
	requireAnswers(t, service, after)
}

func TestMySQLRollsBackAConfigItRefusesAndAnImageThatCannotStart(t *testing.T) {
	t.Parallel()
	store := testcluster.StartObjectStore(t, cluster.NodeAddress(), nil)
	ns := newNamespace(t, "rollback-mysql", restricted)
	createS3Keys(t, ns, store)
	spec := fmt.Sprintf(`{"image": %q, "database": "orders", "user": "clerk", "storage": {"size": "1Gi"},
  "config": ["max_connections=77"],
  "upgrade": {"progressDeadlineSeconds": %d},
  "backup": {"schedule": "0 3 * * *", "suspend": true,
    "storage": {"s3": {"endpoint": %q, "bucket": %q, "forcePathStyle": true, "credentialsSecretRef": {"name": "s3-keys"}}}}}`,
		mariadbImage, int(progressDeadline.Seconds()), store.Endpoint, store.Bucket)
	created := time.Now()
	kubectl(t, `{"apiVersion": "apps.appkeeper.dev/v1alpha1", "kind": "MySQL", "metadata": {"name": "shop"}, "spec": `+spec+`}`,
		"apply", "-n", ns, "-f", "-")
	waitMySQL(t, ns, created)
	db := clerkDB(t, ns)
	if _, err := db.Exec("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(32))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO items VALUES (1, 'apple'), (2, 'pear')"); err != nil {
		t.Fatal(err)
	}
	pods := (&appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}).SelectorLabels()
	selectOne := func(ctx context.Context) error { return db.QueryRowContext(ctx, "SELECT 1").Scan(new(int)) }

	t.Run("a config line mysqld refuses", func(t *testing.T) {
		counted := testenv.Rollbacks(t, "MySQL")
		e := startEpisode(t, "MySQL", ns, pods, statefulSetOf("shop"), selectOne)
		kubectl(t, "", "patch", "-n", ns, "mysql", "shop", "--type=merge", "-p", `{"spec":{"config":["max_connections=77","no_such_option=1"]}}`)
		e.waitRolledBack(t, progressDeadline)
		e.waitAvailable(t, ns, "shop", time.Second)
		_, outage := e.finish(t)
		requireOutageWithin(t, outage)
		if !strings.Contains(e.failedOutput, "unknown variable 'no_such_option=1'") && !strings.Contains(e.failedOutput, "could not be read") {
			t.Errorf("the failed server said %q, want mysqld refusing no_such_option", e.failedOutput)
		}
		rolledBack(t, ns, "MySQL", "shop", counted, rollback{1, badConfig, mariadbImage, mariadbImage})
		cnf := &corev1.ConfigMap{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shop-config"}, cnf); err != nil {
			t.Fatal(err)
		}
		for _, content := range cnf.Data {
			if strings.Contains(content, "no_such_option") || !strings.Contains(content, "max_connections=77") {
				t.Errorf("my.cnf after the rollback:\n%s\nwant the old one back", content)
			}
		}
		requireItems(t, db)
	})

	t.Run("an image that cannot start, with its backup named", func(t *testing.T) {
		// The spec back at the good revision clears the rollback; the next change is judged anew.
		kubectl(t, "", "patch", "-n", ns, "mysql", "shop", "--type=merge", "-p", `{"spec":{"config":["max_connections=77"]}}`)
		waitNotDegraded(t, ns, "MySQL", "shop")
		counted := testenv.Rollbacks(t, "MySQL")
		e := startEpisode(t, "MySQL", ns, pods, statefulSetOf("shop"), selectOne)
		kubectl(t, "", "patch", "-n", ns, "mysql", "shop", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"image":%q}}`, cluster.BrokenImage()))
		// The backup before the upgrade runs first; the deadline runs from the rollout's start.
		e.waitRolledBack(t, progressDeadline+timeout)
		e.waitAvailable(t, ns, "shop", time.Second)
		_, outage := e.finish(t)
		requireOutageWithin(t, outage)
		st := rolledBack(t, ns, "MySQL", "shop", counted, rollback{2, crashLoop, cluster.BrokenImage(), mariadbImage})
		m := &appsv1alpha1.MySQL{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shop"}, m); err != nil {
			t.Fatal(err)
		}
		if m.Status.Backup == nil || st.Failed.Backup == "" || st.Failed.Backup != m.Status.Backup.PreUpgradeBackup {
			t.Errorf("status.rollout.failed.backup %q, want the pre-upgrade backup of status.backup %+v", st.Failed.Backup, m.Status.Backup)
		} else if b := waitBackup(t, ns, st.Failed.Backup, false); b.Status.Reason != appsv1alpha1.BackupReasonPreUpgrade {
			t.Errorf("backup %s was taken for %s, want PreUpgrade", b.Name, b.Status.Reason)
		}
		requireItems(t, db)
	})
}

func TestWordPressRollsBackAnImageThatCannotStart(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "rollback-wp", baseline)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPress
metadata:
  name: blog
spec:
  image: %s
  upgrade: {progressDeadlineSeconds: %d}
  database:
    mysql:
      image: %s
      storage: {size: 1Gi}
`, wordpressImage, int(progressDeadline.Seconds()), mariadbImage), "apply", "-n", ns, "-f", "-")
	site := waitWordPress(t, ns, created, 1)
	installSite(t, site, "editor", "a long passphrase for the test site")
	counted := testenv.Rollbacks(t, "WordPress")

	wp := &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blog"}}
	e := startEpisode(t, "WordPress", ns, wp.SelectorLabels(), deploymentOf("blog"), func(ctx context.Context) error {
		body, err := httpGet(ctx, site+"/")
		if err == nil && !strings.Contains(body, "Real node") {
			err = fmt.Errorf("the home page does not show the site's title")
		}
		return err
	})
	kubectl(t, "", "patch", "-n", ns, "wordpress", "blog", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"image":%q}}`, cluster.BrokenImage()))
	e.waitRolledBack(t, progressDeadline)
	e.waitAvailable(t, ns, "blog", time.Second)
	// A volume one node mounts: the Deployment recreates, so the site is down from the old pod's
	// end to the restored pod's readiness.
	_, outage := e.finish(t)
	requireOutageWithin(t, outage)
	rolledBack(t, ns, "WordPress", "blog", counted, rollback{1, crashLoop, cluster.BrokenImage(), wordpressImage})
	waitPods(t, ns, wp.SelectorLabels(), 1, wordpressImage)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(wp), wp); err != nil {
		t.Fatal(err)
	}
	if wp.Spec.Image != cluster.BrokenImage() {
		t.Errorf("spec.image is %s, want the user's %s kept", wp.Spec.Image, cluster.BrokenImage())
	}
	// The site's MySQL was not part of the upgrade: it neither rolled out nor back.
	if st, _, _ := instanceStatus(t, ns, "MySQL", wp.MySQLName()); st.Rollbacks != 0 || st.Failed != nil {
		t.Errorf("the site's MySQL rolled back: %+v", st)
	}
}

// clerkDB connects as the MySQL shop's user through its Service from the host, a new connection
// for every statement, so that each one goes through kube-proxy to whichever server answers.
func clerkDB(t *testing.T, ns string) *sql.DB {
	t.Helper()
	return clerkDBTimingOut(t, ns, 2*time.Second)
}

// clerkDBTimingOut is clerkDB whose connections wait at most timeout for each step.
func clerkDBTimingOut(t *testing.T, ns string, timeout time.Duration) *sql.DB {
	t.Helper()
	secret := secretData(t, ns, "shop-credentials")
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = "clerk", secret[appsv1alpha1.SecretKeyPassword], "orders"
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(clusterIP(t, ns, "shop"), "3306")
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 2*time.Second, timeout, timeout
	// A connection the server closes while it stops is a failed request, counted: not a log line.
	cfg.Logger = mysql.Logger(log.New(io.Discard, "", 0))
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(0)
	t.Cleanup(func() { _ = db.Close() })
	await.Eventually(t, time.Minute, func(ctx context.Context) error { return db.PingContext(ctx) })
	return db
}

// requireItems requires the rows written before the upgrades.
func requireItems(t *testing.T, db *sql.DB) {
	t.Helper()
	var got string
	if err := db.QueryRow("SELECT GROUP_CONCAT(name ORDER BY id) FROM items").Scan(&got); err != nil || got != "apple,pear" {
		t.Errorf("rows after the rollback: %q, %v; want apple,pear", got, err)
	}
}

// requireOutageWithin bounds how long requests failed: no longer than the deadline plus the
// restored pod's start.
func requireOutageWithin(t *testing.T, outage time.Duration) {
	t.Helper()
	if outage > progressDeadline+outageMargin {
		t.Errorf("requests failed for %s, want at most the progress deadline %s and %s", outage, progressDeadline, outageMargin)
	}
}

// waitNotDegraded waits until the instance reports Degraded=False for its generation.
func waitNotDegraded(t *testing.T, ns, kind, name string) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error {
		_, conditions, generation := instanceStatus(t, ns, kind, name)
		return await.ConditionIs(conditions, generation, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse)
	})
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// samePods tells whether a and b are the same pods, not merely pods of the same names.
func samePods(a, b []corev1.Pod) bool {
	uids := func(pods []corev1.Pod) []string {
		out := make([]string, 0, len(pods))
		for _, p := range pods {
			out = append(out, string(p.UID))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(uids(a), uids(b))
}
