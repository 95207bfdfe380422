// Package podmonitorlater_test runs the operator on an API server that serves no PodMonitor when
// the operator starts: prometheus-operator is installed, removed and installed again while it runs.
package podmonitorlater_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/podmonitor"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

const timeout = 60 * time.Second

func TestPodMonitorsComeWithPrometheusOperatorInstalledAfterTheOperator(t *testing.T) {
	operatorLog := testenv.CaptureLog(t)
	ns := testcluster.NewNamespace(t, k8s, "late")
	monitoring := appsv1alpha1.Monitoring{Enabled: true}
	web := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1alpha1.WebServerSpec{Image: "nginx:1.27.4", Monitoring: monitoring}}
	cache := &appsv1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns},
		Spec: appsv1alpha1.MemcachedSpec{Monitoring: monitoring}}
	plain := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns},
		Spec: appsv1alpha1.WebServerSpec{Image: "nginx:1.27.4"}}
	for _, obj := range []client.Object{web, cache, plain} {
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	// The passes without the kind are over once the children are there.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(plain), &appsv1.Deployment{}); err != nil {
			return err
		}
		return k8s.Get(ctx, client.ObjectKeyFromObject(cache), &appsv1.StatefulSet{})
	})

	crd := installPodMonitorCRD(t)
	requirePodMonitors(t, "installed after the operator", web, cache)
	requireLogged(t, operatorLog, "prometheus-operator's PodMonitor is installed: ", 1)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(plain), podmonitor.New()); !apierrors.IsNotFound(err) {
		t.Errorf("a WebServer without monitoring has a PodMonitor (%v)", err)
	}

	if err := k8s.Delete(context.Background(), crd); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		if countLogged(operatorLog, "prometheus-operator's PodMonitor CRD is deleted: ") != 1 {
			return errors.New("the operator has not said that the PodMonitor CRD is deleted")
		}
		return nil
	})
	requireQuietAboutPodMonitors(t)
	// The operator carries on without the kind: a new WebServer gets its children.
	later := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: ns},
		Spec: appsv1alpha1.WebServerSpec{Image: "nginx:1.27.4", Monitoring: monitoring}}
	if err := k8s.Create(context.Background(), later); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKeyFromObject(later), &appsv1.Deployment{})
	})

	installPodMonitorCRD(t)
	requirePodMonitors(t, "installed again", web, cache, later)
	requireLogged(t, operatorLog, "prometheus-operator's PodMonitor is installed: ", 2)
}

// installPodMonitorCRD installs the CRD prometheus-operator releases and returns it once the API
// server has it.
func installPodMonitorCRD(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	typed, err := testcluster.PrometheusOperatorCRD("podmonitors")
	if err != nil {
		t.Fatal(err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: content}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	// A CRD being deleted still holds its name until its custom resources are gone.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Create(ctx, crd.DeepCopy())
	})
	return crd
}

// requirePodMonitors waits until every owner has its PodMonitor and logs how long that took.
func requirePodMonitors(t *testing.T, when string, owners ...inspect.Selecting) {
	t.Helper()
	start := time.Now()
	for _, owner := range owners {
		await.Eventually(t, timeout, func(ctx context.Context) error {
			return inspect.PodMonitorProblem(ctx, k8s, owner)
		})
	}
	t.Logf("PodMonitor CRD %s: every monitored resource had its PodMonitor %v after the CRD was created",
		when, time.Since(start).Round(time.Millisecond))
}

// requireQuietAboutPodMonitors checks that, the kind gone, the operator does not keep asking for
// PodMonitors.
func requireQuietAboutPodMonitors(t *testing.T) {
	t.Helper()
	// A watch that the deletion ended may still be on its way out.
	time.Sleep(time.Second)
	before := testenv.Requests(http.MethodGet, "/podmonitors")
	time.Sleep(5 * time.Second)
	if asked := testenv.Requests(http.MethodGet, "/podmonitors") - before; asked != 0 {
		t.Errorf("the operator asked for PodMonitors %d time(s) in 5 s after their CRD was deleted", asked)
	}
}

func countLogged(operatorLog func() []string, message string) int {
	n := 0
	for _, line := range operatorLog() {
		if strings.Contains(line, message) {
			n++
		}
	}
	return n
}

func requireLogged(t *testing.T, operatorLog func() []string, message string, times int) {
	t.Helper()
	if got := countLogged(operatorLog, message); got != times {
		t.Errorf("the operator logged %q %d time(s), want %d:\n%s", message, got, times, strings.Join(operatorLog(), "\n"))
	}
}
