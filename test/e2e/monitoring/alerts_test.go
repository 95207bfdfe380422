//go:build e2e

package monitoring

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/dashboards"
	"github.com/appkeeper/appkeeper/internal/installer"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/install"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

const (
	namespace      = "appkeeper-system"
	serviceAccount = "appkeeper-manager"
	// job is the job a ServiceMonitor of the Service appkeeper-metrics scrapes under, which the
	// operator's alerts select.
	job = "appkeeper-metrics"
	// degradedFor replaces AppkeeperInstanceDegraded's for: through the chart's prometheusRule.for.
	degradedFor = "5s"
	timeout     = 90 * time.Second
)

// TestDegradedAlertFiresAndClears: a MySQL whose credentials Secret is missing is Degraded;
// Prometheus, scraping the operator, raises AppkeeperInstanceDegraded for it, named after the
// resource and with its runbook, and clears it once the Secret exists.
func TestDegradedAlertFiresAndClears(t *testing.T) {
	applyInstallManifest(t)
	kubeconfig := testcluster.ImpersonatingKubeconfig(t, cluster.KubeconfigPath, "system:serviceaccount:"+namespace+":"+serviceAccount)
	operator := testcluster.StartOperator(t, "appkeeper", kubeconfig, filepath.Join(cluster.Dir, "logs"))
	prometheus := testcluster.StartPrometheus(t, testservers.PrometheusOptions{
		Dir: filepath.Join(cluster.Dir, "prometheus"),
		Targets: []testservers.ScrapeTarget{{
			Job: job, URL: operator.MetricsURL, BearerToken: metricsReaderToken(t),
			InsecureSkipVerify: true, HonorLabels: true,
		}},
		RuleFiles: map[string][]byte{"alerts.yaml": chartRules(t, map[string]any{"AppkeeperInstanceDegraded": degradedFor})},
	})
	ctx := context.Background()
	waitForSample(t, prometheus, fmt.Sprintf(`up{job=%q} == 1`, job))

	ns := testcluster.NewNamespace(t, k8s, "shop")
	db := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1alpha1.MySQLSpec{
			Database: "shop", User: "shop", CredentialsSecretRef: &appsv1alpha1.SecretReference{Name: "db-passwords"},
		},
	}
	if err := k8s.Create(ctx, db); err != nil {
		t.Fatal(err)
	}
	resource := fmt.Sprintf(`kind="MySQL", namespace=%q, name="db"`, ns)
	// honor_labels keeps the resource's namespace on the series, rather than the operator's.
	waitForSample(t, prometheus, `appkeeper_resource_condition{`+resource+`, condition="Degraded", status="true"} == 1`)

	began := time.Now()
	alert := waitForAlert(t, prometheus, ns, func(alerts []promv1.Alert) error {
		if len(alerts) != 1 || alerts[0].State != promv1.AlertStateFiring {
			return fmt.Errorf("alerts %v, want one firing", alerts)
		}
		return nil
	})[0]
	t.Logf("AppkeeperInstanceDegraded firing %s after the series showed Degraded (for: %s)", time.Since(began).Round(time.Millisecond), degradedFor)
	if got, want := string(alert.Annotations["summary"]), "MySQL "+ns+"/db is Degraded"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got := string(alert.Annotations["runbook_url"]); !strings.HasSuffix(got, "/docs/runbooks/AppkeeperInstanceDegraded.md") {
		t.Errorf("runbook_url %q does not name the alert's runbook", got)
	}
	if got := string(alert.Labels["severity"]); got != "warning" {
		t.Errorf("severity %q, want warning", got)
	}

	checkRulesEvaluate(t, prometheus)
	checkDashboardQueriesEvaluate(t, prometheus)

	createSecret(t, ns, "db-passwords")
	began = time.Now()
	waitForAlert(t, prometheus, ns, func(alerts []promv1.Alert) error {
		if len(alerts) != 0 {
			return fmt.Errorf("alerts %v, want none", alerts)
		}
		return nil
	})
	t.Logf("AppkeeperInstanceDegraded cleared %s after the Secret was created", time.Since(began).Round(time.Millisecond))
}

// checkRulesEvaluate: every alert of the chart is loaded, and its expression evaluates without
// error against what the operator serves.
func checkRulesEvaluate(t *testing.T, prometheus *testservers.PrometheusServer) {
	t.Helper()
	health, err := prometheus.RuleHealth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, alert := range []string{"AppkeeperInstanceDegraded", "AppkeeperRolloutRolledBack", "AppkeeperBackupTooOld",
		"AppkeeperBackupVerificationFailed", "AppkeeperBackupFailing", "AppkeeperVolumeAlmostFull",
		"AppkeeperOperatorDown", "AppkeeperOperatorNotReconciling", "AppkeeperMySQLNoPrimary", "AppkeeperMySQLReplicaLagging"} {
		if health[alert] != string(promv1.RuleHealthGood) {
			t.Errorf("%s: health %q", alert, health[alert])
		}
	}
}

// checkDashboardQueriesEvaluate: every query of every dashboard panel, its variables on "All",
// evaluates without error against what the operator serves.
func checkDashboardQueriesEvaluate(t *testing.T, prometheus *testservers.PrometheusServer) {
	t.Helper()
	queries, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, q := range queries {
		samples, err := prometheus.Query(context.Background(), q.Expr)
		if err != nil {
			t.Errorf("dashboard %s, panel %q, query %s: %v\n%s", q.Dashboard, q.Panel, q.RefID, err, q.Expr)
			continue
		}
		if len(samples) > 0 {
			answered++
		}
	}
	t.Logf("%d dashboard queries evaluated, %d with samples", len(queries), answered)
}

// waitForAlert waits until AppkeeperInstanceDegraded's alerts for the MySQL ns/db pass check, and
// returns them.
func waitForAlert(t *testing.T, prometheus *testservers.PrometheusServer, ns string, check func([]promv1.Alert) error) []promv1.Alert {
	t.Helper()
	var alerts []promv1.Alert
	await.Eventually(t, timeout, func(ctx context.Context) error {
		all, err := prometheus.Alerts(ctx, "AppkeeperInstanceDegraded")
		if err != nil {
			return err
		}
		alerts = nil
		for _, alert := range all {
			if alert.Labels["kind"] == "MySQL" && alert.Labels["namespace"] == model.LabelValue(ns) && alert.Labels["name"] == "db" {
				alerts = append(alerts, alert)
			}
		}
		return check(alerts)
	})
	return alerts
}

// waitForSample waits until the query returns a sample.
func waitForSample(t *testing.T, prometheus *testservers.PrometheusServer, query string) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		samples, err := prometheus.Query(ctx, query)
		if err != nil {
			return err
		}
		if len(samples) == 0 {
			return errors.New(query + " returns nothing: see the operator's /metrics and " + prometheus.LogPath)
		}
		return nil
	})
}

// chartRules renders the chart's PrometheusRule, with the given for: by alert name, and returns
// its groups as a Prometheus rule file.
func chartRules(t *testing.T, alertFor map[string]any) []byte {
	t.Helper()
	objects, err := installer.RenderChart(filepath.Join(root, "charts", "appkeeper"), namespace,
		map[string]any{"prometheusRule": map[string]any{"enabled": true, "for": alertFor}})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		if obj.GetKind() == "PrometheusRule" {
			data, err := yaml.Marshal(obj.Object["spec"])
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatal("the chart renders no PrometheusRule")
	return nil
}

// metricsReaderToken creates a ServiceAccount bound to appkeeper-metrics-reader, as a Prometheus
// scraping the operator needs, and returns a token for it.
func metricsReaderToken(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "prometheus"}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-appkeeper-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "appkeeper-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: sa.Name}},
	}
	for _, obj := range []client.Object{sa, binding} {
		if err := k8s.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	request := &authenticationv1.TokenRequest{}
	if err := k8s.SubResource("token").Create(ctx, sa, request); err != nil {
		t.Fatal(err)
	}
	return request.Status.Token
}

func createSecret(t *testing.T, ns, name string) {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data: map[string][]byte{
			appsv1alpha1.SecretKeyRootPassword: []byte("root-secret"), appsv1alpha1.SecretKeyPassword: []byte("user-secret"),
		},
	}
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
}

// applyInstallManifest applies what dist/install.yaml holds: the CRDs, and the ServiceAccount and
// RBAC the operator runs with.
func applyInstallManifest(t *testing.T) {
	t.Helper()
	install.ApplyManifest(t, cluster, filepath.Join(root, "config", "default"))
	// Until the CRDs are served.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.List(ctx, &appsv1alpha1.MySQLList{})
	})
}
