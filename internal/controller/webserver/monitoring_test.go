package webserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/podmonitor"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

func TestMonitoringRunsTheExporterAndRollsThePods(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 1, "nginx:1.27.4")
	childrenExist(t, ns)
	before := get(t, ns, "web", &appsv1.Deployment{}).Spec.Template
	if inspect.HasContainer(before, "exporter") || strings.Contains(get(t, ns, "web-nginx", &corev1.ConfigMap{}).Data["default.conf"], "stub_status") {
		t.Fatal("a WebServer without monitoring runs an exporter or serves stub_status")
	}

	var revision string
	await.Eventually(t, timeout, func(context.Context) error {
		if revision = get(t, ns, "web", &appsv1alpha1.WebServer{}).Status.Rollout.UpdateRevision; revision == "" {
			return errors.New("no revision in the status yet")
		}
		return nil
	})

	patchSpec(t, ns, `{"spec":{"monitoring":{"enabled":true}}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		template := get(t, ns, "web", &appsv1.Deployment{}).Spec.Template
		if problem := inspect.ExporterProblem(template, appsv1alpha1.DefaultWebServerExporterImage, 9113,
			"--nginx.scrape-uri=http://127.0.0.1:8079/stub_status"); problem != "" {
			return errors.New(problem)
		}
		if get(t, ns, "web", &appsv1alpha1.WebServer{}).Status.Rollout.UpdateRevision == revision {
			return errors.New("monitoring is no new revision: the pods would not roll and could not roll back")
		}
		if conf := get(t, ns, "web-nginx", &corev1.ConfigMap{}).Data["default.conf"]; !strings.Contains(conf, "listen 127.0.0.1:8079;") {
			return errors.New("nginx's server block has no stub_status server on 127.0.0.1:8079")
		}
		return nil
	})

	patchSpec(t, ns, `{"spec":{"monitoring":{"enabled":false}}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if inspect.HasContainer(get(t, ns, "web", &appsv1.Deployment{}).Spec.Template, "exporter") {
			return errors.New("the exporter stays with monitoring off")
		}
		if strings.Contains(get(t, ns, "web-nginx", &corev1.ConfigMap{}).Data["default.conf"], "stub_status") {
			return errors.New("nginx still serves stub_status with monitoring off")
		}
		return nil
	})
}

func TestWithoutPrometheusOperatorTheStartLogSaysSoOnce(t *testing.T) {
	if _, err := k8s.RESTMapper().RESTMapping(podmonitor.GVK.GroupKind(), podmonitor.GVK.Version); !meta.IsNoMatchError(err) {
		t.Fatalf("this test's API server must serve no PodMonitor: %v", err)
	}
	said := 0
	for _, line := range testenv.StartupLog() {
		if strings.Contains(line, "prometheus-operator's PodMonitor is not installed: ") {
			said++
		}
	}
	if said != 1 {
		t.Fatalf("the operator said %d times at start that PodMonitor is not installed, want once; it logged:\n%s",
			said, strings.Join(testenv.StartupLog(), "\n"))
	}
}
