//go:build e2e

package install

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/internal/installer"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/install"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

const (
	namespace      = "appkeeper-system"
	serviceAccount = "appkeeper-manager"
	// leaseName is the operator's LeaderElectionID.
	leaseName = "appkeeper.apps.appkeeper.dev"
	// leaseDuration is controller-runtime's default: how long a standby replica waits, at most,
	// for a leader that stops renewing.
	leaseDuration = 15 * time.Second
	// timeout bounds every wait; on the local cluster each step takes well under a second.
	timeout = 60 * time.Second
)

// smoke has one instance per kind, each of which must become Available with the operator holding
// only its ServiceAccount's rights, in a namespace that enforces the pod security standard the
// kind's pods meet. A new kind adds a row.
var smoke = []struct {
	kind        string
	podSecurity string
	manifest    string
}{
	{kind: "WebServer", podSecurity: "restricted", manifest: `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata:
  name: web
spec:
  replicas: 2
`},
	{kind: "Memcached", podSecurity: "restricted", manifest: `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: Memcached
metadata:
  name: cache
spec:
  size: 2
`},
	{kind: "PodSet", podSecurity: "restricted", manifest: `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: PodSet
metadata:
  name: workers
spec:
  replicas: 2
  template:
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: main
          image: busybox:1.36
          command: ["sleep", "3600"]
          securityContext:
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
`},
	{kind: "MySQL", podSecurity: "restricted", manifest: `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: db
spec:
  database: shop
  user: shop
  storage:
    size: 1Gi
`},
	// The image's Apache starts as root to bind port 80; its own MySQL meets restricted.
	{kind: "WordPress", podSecurity: "baseline", manifest: `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPress
metadata:
  name: blog
spec:
  storage:
    size: 1Gi
  database:
    mysql:
      storage:
        size: 1Gi
`},
}

func TestInstall(t *testing.T) {
	began := time.Now()
	applyInstallManifest(t)
	t.Logf("install applied and the manager Deployment available in %s", time.Since(began).Round(time.Millisecond))
	dryRunChart(t, nil)
	installPrometheusOperatorCRDs(t)
	dryRunChart(t, chartValues)

	kubeconfig := testcluster.ImpersonatingKubeconfig(t, cluster.KubeconfigPath, "system:serviceaccount:"+namespace+":"+serviceAccount)
	args := []string{"--leader-elect", "--leader-election-namespace=" + namespace}
	requireForbidden(t, kubeconfig)
	first := startOperator(t, "appkeeper-1", kubeconfig, args...)
	firstHolder := waitLeaseHolder(t, func(holder string) error {
		if holder == "" {
			return errors.New("no holder yet")
		}
		return nil
	})
	t.Logf("appkeeper-1 holds the lease as %s", firstHolder)

	// The smoke scenarios, one per kind.
	instances := map[string]*unstructured.Unstructured{}
	for _, row := range smoke {
		t.Run(row.kind, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(row.manifest), &obj.Object); err != nil {
				t.Fatal(err)
			}
			ns := testcluster.NewNamespace(t, k8s, strings.ToLower(row.kind))
			kubectl(t, "label", "namespace", ns, "pod-security.kubernetes.io/enforce="+row.podSecurity)
			obj.SetNamespace(ns)
			started := time.Now()
			if err := k8s.Create(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
			waitAvailable(t, obj)
			t.Logf("%s Available in %s", row.kind, time.Since(started).Round(time.Millisecond))
			instances[row.kind] = obj
		})
	}
	if t.Failed() {
		t.FailNow()
	}
	checkMetricsAccess(t, first)

	// A second replica waits on standby while the first holds the lease.
	second := startOperator(t, "appkeeper-2", kubeconfig, args...)
	await.Eventually(t, timeout, func(context.Context) error {
		if !strings.Contains(second.Log(t), "Attempting to acquire leader lease") {
			return errors.New("appkeeper-2 has not tried for the lease yet")
		}
		return nil
	})
	standby := time.Now()
	for time.Since(standby) < 3*time.Second {
		if holder := leaseHolder(t); holder != firstHolder {
			t.Fatalf("lease holder changed from %s to %s while appkeeper-1 ran", firstHolder, holder)
		}
		if log := second.Log(t); strings.Contains(log, "Successfully acquired lease") || strings.Contains(log, "Starting Controller") {
			t.Fatalf("appkeeper-2 started its controllers while on standby:\n%s", log)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Failover: stop the leader as Kubernetes stops a pod, then change a WebServer; the standby
	// replica must take the lease and reconcile the change within the lease duration.
	web := instances["WebServer"]
	sigterm := time.Now()
	first.Stop(t)
	stopped := time.Since(sigterm)
	patch := []byte(`{"spec":{"replicas":3}}`)
	if err := k8s.Patch(context.Background(), web, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	secondHolder := waitLeaseHolder(t, func(holder string) error {
		if holder == "" || holder == firstHolder {
			return fmt.Errorf("holder %q", holder)
		}
		return nil
	})
	leased := time.Since(sigterm)
	waitAvailable(t, web, func(obj *unstructured.Unstructured) error {
		if ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); ready != 3 {
			return fmt.Errorf("%d ready replicas, want 3", ready)
		}
		return nil
	})
	reconciled := time.Since(sigterm)
	t.Logf("failover: appkeeper-1 exited %s after SIGTERM; appkeeper-2 held the lease as %s after %s and had the WebServer scaled and Available after %s (lease duration %s)",
		stopped.Round(time.Millisecond), secondHolder, leased.Round(time.Millisecond), reconciled.Round(time.Millisecond), leaseDuration)
	if reconciled > leaseDuration {
		t.Errorf("failover took %s, longer than the lease duration %s", reconciled, leaseDuration)
	}

	// Whatever RBAC forgot and no condition shows (an event, a lease update) is in the logs.
	for _, p := range []*testcluster.OperatorProcess{first, second} {
		for _, line := range p.RefusedRequests(t) {
			t.Errorf("%s was refused a request: %s", p.Name, line)
		}
	}
}

// applyInstallManifest renders config/default, as "make build-installer" does, applies it
// server-side with the cluster's kubectl and checks that every object is there and the manager
// Deployment's pods pass the namespace's restricted pod security admission.
func applyInstallManifest(t *testing.T) {
	t.Helper()
	for _, want := range install.ApplyManifest(t, cluster, filepath.Join(root, "config", "default")) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(want.GroupVersionKind())
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(want), got); err != nil {
			t.Errorf("%s %s: %v", want.GetKind(), want.GetName(), err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "appkeeper-manager"}, d); err != nil {
			return err
		}
		if d.Status.AvailableReplicas < 1 {
			return fmt.Errorf("manager Deployment not available: %+v", d.Status.Conditions)
		}
		return nil
	})
	testcluster.RequireRestricted(t, k8s, namespace)
}

// checkMetricsAccess scrapes the operator's metrics as two ServiceAccounts: one bound to
// appkeeper-metrics-reader is served, the other refused. The operator asks the API server, with its
// own rights, to review each token and authorize the request.
func checkMetricsAccess(t *testing.T, p *testcluster.OperatorProcess) {
	t.Helper()
	ctx := context.Background()
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "appkeeper-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: "scraper"}},
	}
	if err := k8s.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	scraper, stranger := serviceAccountToken(t, "scraper"), serviceAccountToken(t, "stranger")
	await.Eventually(t, timeout, func(context.Context) error {
		if code := p.Scrape(t, scraper); code != http.StatusOK {
			return fmt.Errorf("metrics with the reader role: HTTP %d", code)
		}
		return nil
	})
	if code := p.Scrape(t, stranger); code != http.StatusForbidden {
		t.Fatalf("metrics without the reader role: HTTP %d, want 403", code)
	}
}

// serviceAccountToken creates a ServiceAccount in the operator's namespace and returns a token
// for it.
func serviceAccountToken(t *testing.T, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := k8s.Create(context.Background(), sa); err != nil {
		t.Fatal(err)
	}
	request := &authenticationv1.TokenRequest{}
	if err := k8s.SubResource("token").Create(context.Background(), sa, request); err != nil {
		t.Fatal(err)
	}
	return request.Status.Token
}

// chartValues sets every value of the chart that shapes an object the API server validates,
// serviceMonitor and prometheusRule included, which prometheus-operator's CRDs validate.
var chartValues = map[string]any{
	"imagePullSecrets":         []any{map[string]any{"name": "registry-credentials"}},
	"priorityClassName":        "system-cluster-critical",
	"podLabels":                map[string]any{"team": "platform"},
	"podAnnotations":           map[string]any{"example.dev/owner": "platform"},
	"podSecurityContext":       map[string]any{"runAsNonRoot": true, "runAsUser": 65532, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
	"containerSecurityContext": map[string]any{"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}},
	"extraArgs":                []any{"--max-concurrent-reconciles=4"},
	"extraEnv":                 []any{map[string]any{"name": "GOMEMLIMIT", "valueFrom": map[string]any{"resourceFieldRef": map[string]any{"resource": "limits.memory"}}}},
	"serviceAccount":           map[string]any{"name": "operator", "annotations": map[string]any{"example.dev/role": "appkeeper"}},
	"crds":                     map[string]any{"keep": false},
	"watchNamespaces":          []any{"default"},
	"metricsCertificate":       map[string]any{"secretName": "appkeeper-metrics-tls"},
	"serviceMonitor":           map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
	"prometheusRule":           map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"}},
}

// installPrometheusOperatorCRDs installs the CRDs of the chart's ServiceMonitor and PrometheusRule
// as prometheus-operator's release ships them, so that the API server validates those objects too.
// The operator started afterwards uses neither kind.
func installPrometheusOperatorCRDs(t *testing.T) {
	t.Helper()
	for _, plural := range []string{"servicemonitors", "prometheusrules"} {
		path, err := testcluster.PrometheusOperatorCRDFile(plural)
		if err != nil {
			t.Fatal(err)
		}
		kubectl(t, "apply", "--server-side", "-f", path)
		kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+plural+".monitoring.coreos.com")
	}
}

// dryRunChart has the API server validate every object of the Helm chart rendered with values, as
// `helm upgrade` would send them over the kustomize install, without changing anything.
func dryRunChart(t *testing.T, values map[string]any) {
	t.Helper()
	objects, err := installer.RenderChart(filepath.Join(root, "charts", "appkeeper"), namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	for _, obj := range objects {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(append(stream, "---\n"...), data...)
	}
	path := filepath.Join(cluster.Dir, "chart.yaml")
	if err := os.WriteFile(path, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "apply", "--server-side", "--dry-run=server", "--force-conflicts", "--field-manager=helm", "-f", path)
}

// kubectl runs the cluster's kubectl as cluster-admin.
func kubectl(t *testing.T, args ...string) {
	t.Helper()
	install.Kubectl(t, cluster, args...)
}

// waitAvailable waits until obj is Available and every extra check passes; obj is refreshed.
func waitAvailable(t *testing.T, obj *unstructured.Unstructured, checks ...func(*unstructured.Unstructured) error) {
	t.Helper()
	await.WaitAvailable(t, k8s, timeout, obj, checks...)
}

// leaseHolder is the identity holding the leader election lease, "" if none or released.
func leaseHolder(t *testing.T) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	err := k8s.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: leaseName}, lease)
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

func waitLeaseHolder(t *testing.T, want func(holder string) error) string {
	t.Helper()
	var holder string
	await.Eventually(t, timeout, func(context.Context) error {
		holder = leaseHolder(t)
		return want(holder)
	})
	return holder
}

// requireForbidden checks that the impersonating kubeconfig has no more than the ServiceAccount's
// rights: the operator may not read Nodes.
func requireForbidden(t *testing.T, kubeconfig string) {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Nodes are read, to leave a cordoned one, and never written.
	if err := c.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "any"}}); !apierrors.IsForbidden(err) {
		t.Fatalf("deleting a node as the ServiceAccount: got %v, want forbidden", err)
	}
	if err := c.List(context.Background(), &rbacv1.ClusterRoleList{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing ClusterRoles as the ServiceAccount: got %v, want forbidden", err)
	}
}
