//go:build e2e

package helm

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// chart is charts/appkeeper, from this package's directory.
var chart = filepath.Join("..", "..", "..", "charts", "appkeeper")

const (
	// timeout bounds every wait; on the local cluster each step takes seconds at most.
	timeout = 60 * time.Second
	// helmTimeout bounds helm's own --wait.
	helmTimeout = "2m"
)

// release is one helm release of the chart.
type release struct{ name, namespace string }

func (r release) install(t *testing.T, h helmCLI, extra ...string) string {
	t.Helper()
	args := []string{"install", r.name, chart, "--namespace", r.namespace, "--create-namespace", "--wait", "--timeout", helmTimeout}
	return h.must(t, append(args, extra...)...)
}

func (r release) upgrade(t *testing.T, h helmCLI, set string) {
	t.Helper()
	h.must(t, "upgrade", r.name, chart, "--namespace", r.namespace, "--set", set, "--wait", "--timeout", helmTimeout)
}

func (r release) uninstall(t *testing.T, h helmCLI) string {
	t.Helper()
	return h.must(t, "uninstall", r.name, "--namespace", r.namespace, "--wait", "--timeout", helmTimeout)
}

func TestHelmLifecycle(t *testing.T) {
	began := time.Now()
	h := newHelm(t)
	first := release{name: "appkeeper", namespace: "appkeeper-system"}
	second := release{name: "other", namespace: "other-system"}

	first.install(t, h)
	requireInstalled(t, first)
	requireManagerArgs(t, first, nil)
	operator := startOperator(t, first)
	web := createWebServer(t)
	await.WaitAvailable(t, k8s, timeout, web)
	uid := web.GetUID()

	first.upgrade(t, h, "logLevel=debug")
	requireManagerArgs(t, first, map[string]any{"logLevel": "debug"})
	requireWebServerKept(t, web, uid)

	h.must(t, "rollback", first.name, "1", "--namespace", first.namespace, "--wait", "--timeout", helmTimeout)
	requireManagerArgs(t, first, nil)

	// Uninstalling deletes the Deployment, whose pods the kubelet would stop.
	stopOperator(t, operator)
	out := first.uninstall(t, h)
	requireUninstalled(t, first, out)
	requireWebServerKept(t, web, uid)

	// The kept CRDs and namespace still name the first release: installed again, it takes them
	// back.
	first.install(t, h)
	requireInstalled(t, first)
	requireUninstalled(t, first, first.uninstall(t, h))

	// Helm refuses them to another release, and creates nothing, unless told to take them over.
	out = h.fails(t, "install", second.name, chart, "--namespace", second.namespace, "--create-namespace")
	if !strings.Contains(out, "invalid ownership metadata") {
		t.Fatalf("helm install under another release name: want it refused for the CRDs' ownership, got:\n%s", out)
	}
	requireAbsent(t, namespaceObject(second.namespace))
	second.install(t, h, "--take-ownership")
	requireInstalled(t, second)
	operator = startOperator(t, second)
	scaleWebServer(t, web, 3)
	second.upgrade(t, h, "logLevel=debug")
	requireManagerArgs(t, second, map[string]any{"logLevel": "debug"})
	requireInstalled(t, second)
	requireWebServerKept(t, web, uid)

	stopOperator(t, operator)
	out = second.uninstall(t, h)
	requireUninstalled(t, second, out)
	requireWebServerKept(t, web, uid)
	t.Logf("the chart's lifecycle took %s", time.Since(began).Round(time.Millisecond))
}

// startOperator runs bin/appkeeper beside the cluster as a pod of the release's Deployment would
// run: as its ServiceAccount, holding the leader election lease in the release's namespace.
func startOperator(t *testing.T, r release) *testcluster.OperatorProcess {
	t.Helper()
	deployment := managerDeployment(t, r)
	account, _, _ := unstructured.NestedString(deployment.Object, "spec", "template", "spec", "serviceAccountName")
	kubeconfig := testcluster.ImpersonatingKubeconfig(t, cluster.KubeconfigPath, "system:serviceaccount:"+r.namespace+":"+account)
	return testcluster.StartOperator(t, "appkeeper-"+r.name, kubeconfig, filepath.Join(cluster.Dir, "logs"),
		"--leader-elect", "--leader-election-namespace="+r.namespace)
}

// stopOperator stops the operator and fails the test if any request it made was refused.
func stopOperator(t *testing.T, p *testcluster.OperatorProcess) {
	t.Helper()
	p.Stop(t)
	for _, line := range p.RefusedRequests(t) {
		t.Errorf("%s was refused a request: %s", p.Name, line)
	}
}

// createWebServer creates a WebServer of 2 replicas in a namespace of its own that enforces the
// restricted pod security standard.
func createWebServer(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	ns := testcluster.NewNamespace(t, k8s, "shop")
	namespace := namespaceObject(ns)
	patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`)
	if err := k8s.Patch(context.Background(), namespace, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	web := &unstructured.Unstructured{}
	manifest := "apiVersion: apps.appkeeper.dev/v1alpha1\nkind: WebServer\nmetadata: {name: web, namespace: " + ns + "}\nspec: {replicas: 2}\n"
	if err := yaml.Unmarshal([]byte(manifest), &web.Object); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(context.Background(), web); err != nil {
		t.Fatal(err)
	}
	return web
}

// scaleWebServer changes the WebServer's replicas and waits until the operator has them ready.
func scaleWebServer(t *testing.T, web *unstructured.Unstructured, replicas int64) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	if err := k8s.Patch(context.Background(), web, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	await.WaitAvailable(t, k8s, timeout, web, func(obj *unstructured.Unstructured) error {
		if ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); ready != replicas {
			return fmt.Errorf("%d ready replicas, want %d", ready, replicas)
		}
		return nil
	})
}
