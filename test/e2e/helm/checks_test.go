//go:build e2e

package helm

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/installer"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// kept are the kinds of the chart's objects that outlive the release, with what they hold: the
// CRDs with every appkeeper resource, the namespace with the release's history.
var kept = map[string]bool{"CustomResourceDefinition": true, "Namespace": true}

// rendered is the chart's objects, rendered as for a release in r's namespace with values.
func rendered(t *testing.T, r release, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objects, err := installer.RenderChart(chart, r.namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// live reads obj's counterpart in the cluster.
func live(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	return got, k8s.Get(ctx, client.ObjectKeyFromObject(obj), got)
}

func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + " " + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// requireInstalled checks that every object of the chart is in the cluster and belongs to r, that
// the CRDs and the namespace are kept on uninstall, that the namespace refuses pods that are not
// restricted and that the manager Deployment is available.
func requireInstalled(t *testing.T, r release) {
	t.Helper()
	for _, obj := range rendered(t, r, nil) {
		got, err := live(context.Background(), obj)
		if err != nil {
			t.Errorf("%s: %v", describe(obj), err)
			continue
		}
		annotations := got.GetAnnotations()
		if annotations["meta.helm.sh/release-name"] != r.name || annotations["meta.helm.sh/release-namespace"] != r.namespace {
			t.Errorf("%s belongs to release %s/%s, want %s/%s", describe(obj),
				annotations["meta.helm.sh/release-namespace"], annotations["meta.helm.sh/release-name"], r.namespace, r.name)
		}
		if kept[obj.GetKind()] && annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("%s is not kept on uninstall", describe(obj))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	testcluster.RequireRestricted(t, k8s, r.namespace)
	if available, _, _ := unstructured.NestedInt64(managerDeployment(t, r).Object, "status", "availableReplicas"); available < 1 {
		t.Fatalf("the manager Deployment in %s has no available replica", r.namespace)
	}
}

// managerDeployment is the chart's Deployment as it runs in r's namespace.
func managerDeployment(t *testing.T, r release) *unstructured.Unstructured {
	t.Helper()
	for _, obj := range rendered(t, r, nil) {
		if obj.GetKind() == "Deployment" {
			got, err := live(context.Background(), obj)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
	}
	t.Fatal("the chart renders no Deployment")
	return nil
}

// requireManagerArgs checks that the manager runs with the arguments the chart renders for values.
func requireManagerArgs(t *testing.T, r release, values map[string]any) {
	t.Helper()
	for _, obj := range rendered(t, r, values) {
		if obj.GetKind() != "Deployment" {
			continue
		}
		got, err := live(context.Background(), obj)
		if err != nil {
			t.Fatal(err)
		}
		if want, have := managerArgs(t, obj), managerArgs(t, got); !reflect.DeepEqual(have, want) {
			t.Fatalf("%s runs with %v, want %v", describe(obj), have, want)
		}
	}
}

func managerArgs(t *testing.T, deployment *unstructured.Unstructured) []any {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		t.Fatalf("%s has no container", describe(deployment))
	}
	args, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "args")
	return args
}

// requireUninstalled checks that the release's objects are gone but for the CRDs and the
// namespace, which helm's output names as kept.
func requireUninstalled(t *testing.T, r release, out string) {
	t.Helper()
	for _, obj := range rendered(t, r, nil) {
		if !kept[obj.GetKind()] {
			requireAbsent(t, obj)
			continue
		}
		got, err := live(context.Background(), obj)
		if err != nil {
			t.Fatalf("%s was not kept: %v", describe(obj), err)
		}
		if got.GetDeletionTimestamp() != nil {
			t.Fatalf("%s is being deleted", describe(obj))
		}
		if line := fmt.Sprintf("[%s] %s", obj.GetKind(), obj.GetName()); !strings.Contains(out, line) {
			t.Errorf("helm uninstall does not list %q among the objects it kept:\n%s", line, out)
		}
	}
}

// requireAbsent waits until obj is not in the cluster.
func requireAbsent(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		_, err := live(ctx, obj)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("%s is still there", describe(obj))
	})
}

func namespaceObject(name string) *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	return ns
}

// requireWebServerKept checks that the WebServer is the same object, still Available, with its
// Deployment and Service.
func requireWebServerKept(t *testing.T, web *unstructured.Unstructured, uid types.UID) {
	t.Helper()
	await.WaitAvailable(t, k8s, timeout, web)
	if web.GetUID() != uid {
		t.Fatalf("WebServer %s/%s was replaced: UID %s, want %s", web.GetNamespace(), web.GetName(), web.GetUID(), uid)
	}
	key := client.ObjectKeyFromObject(web)
	for _, child := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		if err := k8s.Get(context.Background(), key, child); err != nil {
			t.Fatalf("the WebServer's %T: %v", child, err)
		}
		if owner := metav1.GetControllerOf(child); owner == nil || owner.UID != uid {
			t.Fatalf("the WebServer's %T %s is controlled by %v, want the WebServer", child, key, owner)
		}
	}
}
