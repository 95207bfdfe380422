package operator_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/podmonitor"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

const timeout = 20 * time.Second

func TestAMonitoredWebServerHasItsPodMonitor(t *testing.T) {
	for _, line := range testenv.StartupLog() {
		if strings.Contains(line, "PodMonitor is not installed") {
			t.Errorf("the operator says PodMonitor is not installed where it is: %s", line)
		}
	}
	ns := testcluster.NewNamespace(t, k8s, "pm")
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Image: "nginx:1.27.4", Monitoring: appsv1alpha1.Monitoring{Enabled: true}},
	}
	if err := k8s.Create(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error { return inspect.PodMonitorProblem(ctx, k8s, ws) })
	requireNoRewriteOnAPass(t, ws)

	pm := podMonitor(t, ns, "web")
	if err := k8s.Delete(context.Background(), pm); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := inspect.PodMonitorProblem(ctx, k8s, ws); err != nil {
			return err
		}
		if podMonitor(t, ns, "web").GetUID() == pm.GetUID() {
			return errors.New("the deleted PodMonitor is still there")
		}
		return nil
	})

	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"monitoring":{"enabled":false}}}`))
	if err := k8s.Patch(context.Background(), ws, patch); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, podmonitor.New())
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("the PodMonitor stays with monitoring off (%w)", err)
	})
}

func TestMonitoredMemcachedAndMySQLHaveTheirPodMonitors(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "pm")
	monitoring := appsv1alpha1.Monitoring{Enabled: true}
	for _, owner := range []inspect.Selecting{
		&appsv1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns},
			Spec: appsv1alpha1.MemcachedSpec{Monitoring: monitoring}},
		&appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
			Spec: appsv1alpha1.MySQLSpec{Database: "shop", User: "shop", Monitoring: monitoring}},
	} {
		if err := k8s.Create(context.Background(), owner); err != nil {
			t.Fatal(err)
		}
		await.Eventually(t, timeout, func(ctx context.Context) error { return inspect.PodMonitorProblem(ctx, k8s, owner) })
	}
}

func TestAPodMonitorMadeByHandIsLeftAlone(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "pm")
	mine := podmonitor.New()
	mine.SetNamespace(ns)
	mine.SetName("web")
	mine.Object["spec"] = map[string]any{
		"selector":            map[string]any{"matchLabels": map[string]any{"app": "mine"}},
		"podMetricsEndpoints": []any{map[string]any{"port": "http"}},
	}
	if err := k8s.Create(context.Background(), mine); err != nil {
		t.Fatal(err)
	}
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Image: "nginx:1.27.4", Monitoring: appsv1alpha1.Monitoring{Enabled: true}},
	}
	if err := k8s.Create(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(ws), ws); err != nil {
			return err
		}
		degraded := apimeta.FindStatusCondition(ws.Status.Conditions, appsv1alpha1.ConditionDegraded)
		if degraded == nil || degraded.Reason != appsv1alpha1.ReasonNameConflict || !strings.Contains(degraded.Message, "PodMonitor web") {
			return fmt.Errorf("Degraded is %v, want a name conflict over PodMonitor web", degraded)
		}
		return nil
	})
	if got := podMonitor(t, ns, "web"); got.GetResourceVersion() != mine.GetResourceVersion() {
		t.Errorf("the operator wrote to a PodMonitor it does not control: %v", got.Object)
	}
}

func TestAWebServerWithoutMonitoringHasNoPodMonitor(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "pm")
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Image: "nginx:1.27.4"},
	}
	if err := k8s.Create(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	// The Deployment comes in the same pass as a PodMonitor would.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain"}, &appsv1.Deployment{})
	})
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(podmonitor.GVK.GroupVersion().WithKind("PodMonitorList"))
	if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("a WebServer without monitoring has %d PodMonitor(s)", len(list.Items))
	}
}

// requireNoRewriteOnAPass scales ws and checks that the passes that follow send nothing to its
// PodMonitor, which the change leaves as it is.
func requireNoRewriteOnAPass(t *testing.T, ws *appsv1alpha1.WebServer) {
	t.Helper()
	path := "/namespaces/" + ws.Namespace + "/podmonitors/" + ws.Name
	before := testenv.Requests(http.MethodPatch, path)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":2}}`))
	if err := k8s.Patch(context.Background(), ws, patch); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(ws), dep); err != nil {
			return err
		}
		if *dep.Spec.Replicas != 2 {
			return errors.New("the Deployment is not scaled yet")
		}
		return nil
	})
	if sent := testenv.Requests(http.MethodPatch, path) - before; sent != 0 {
		t.Errorf("a pass that leaves the PodMonitor as it is sent it %d patch(es)", sent)
	}
}

func podMonitor(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	pm := podmonitor.New()
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pm); err != nil {
		t.Fatal(err)
	}
	return pm
}
