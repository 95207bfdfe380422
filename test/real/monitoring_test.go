//go:build real

package real

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// The exporter images the real node loads; spec.monitoring names them, as no registry holds the
// default ones.
const (
	nginxExporterImage  = localcluster.LocalNginxExporterImage
	mysqldExporterImage = localcluster.LocalMySQLdExporterImage
)

// The exporter container and its port, as every kind's spec.monitoring adds them.
const (
	exporterContainer = appsv1alpha1.ExporterContainerName
	metricsPort       = appsv1alpha1.ExporterPortName
)

func TestWebServerExporterCountsTheSitesRequests(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "web-metrics", restricted)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata:
  name: web
spec:
  image: %s
  replicas: 1
  monitoring:
    enabled: true
    image: %s
`, nginxImage, nginxExporterImage), "apply", "-n", ns, "-f", "-")
	took := waitAvailable(t, ns, "WebServer", "web", created)
	pod := waitWebServer(t, ns, 1, nginxImage)[0]
	t.Logf("WebServer with its exporter Available %s after it was created", took)

	metrics := exporterURL(t, &pod, nginxExporterImage)
	counters := []string{"nginx_connections_accepted", "nginx_http_requests_total"}
	before := map[string]float64{}
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		if err := requireSeries(ctx, metrics, "nginx_up", 1); err != nil {
			return err
		}
		for _, name := range counters {
			v, err := series(ctx, metrics, name)
			if err != nil {
				return err
			}
			before[name] = v
		}
		return nil
	})

	// Each round asks the site once through its Service and once on the pod, the only one.
	const rounds = 3
	const requests = 2 * rounds
	service := serviceURL(t, ns, "web")
	for range rounds {
		requireAnswers(t, service, []corev1.Pod{pod})
	}
	// The kubelet's probes count too, so the counters rise by at least the site's requests.
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		for _, name := range counters {
			after, err := series(ctx, metrics, name)
			if err != nil {
				return err
			}
			if after < before[name]+requests {
				return fmt.Errorf("%s is %v, want at least %v after %d requests", name, after, before[name]+requests, requests)
			}
		}
		return nil
	})
	t.Logf("nginx's exporter on %s counted the %d requests to the site", metrics, requests)
}

func TestMySQLExporterReadsTheServer(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "mysql-metrics", restricted)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata:
  name: shop
spec:
  image: %s
  database: orders
  user: clerk
  storage: {size: 1Gi}
  monitoring:
    enabled: true
    image: %s
`, mariadbImage, mysqldExporterImage), "apply", "-n", ns, "-f", "-")
	took := waitMySQL(t, ns, created)
	t.Logf("MySQL with its exporter Available %s after it was created (first initialisation included)", took)
	m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
	pod := waitPods(t, ns, m.SelectorLabels(), 1, mariadbImage)[0]

	metrics := exporterURL(t, &pod, mysqldExporterImage)
	await.Eventually(t, time.Minute, func(ctx context.Context) error {
		if err := requireSeries(ctx, metrics, "mysql_up", 1); err != nil {
			return err
		}
		uptime, err := series(ctx, metrics, "mysql_global_status_uptime")
		if err != nil {
			return err
		}
		if uptime <= 0 {
			return fmt.Errorf("mysql_global_status_uptime is %v, want the server's uptime", uptime)
		}
		return nil
	})
	// A collector whose privilege the exporter's account lacks fails every scrape, while
	// mysql_up stays 1: the account must hold what the default collectors read. Scrapes are
	// retried for a while: on a busy node one may not answer within the client's timeout.
	var scrapeErr error
	if wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		scrapeErr = requireSeries(ctx, metrics, "mysql_exporter_last_scrape_error", 0)
		return scrapeErr == nil, nil
	}) != nil {
		logs, _ := runKubectl("", "logs", "-n", ns, pod.Name, "-c", exporterContainer, "--tail=5")
		t.Errorf("%v; the exporter says:\n%s", scrapeErr, logs)
	}
	t.Logf("mysqld's exporter on %s reads the server as its own account", metrics)
}

func TestMemcachedExporterOnTheRealNode(t *testing.T) {
	t.Parallel()
	t.Skip("no local memcached exporter image: Debian packages no memcached exporter, and the Go module proxy refuses github.com/prometheus/memcached_exporter, so nothing builds one without a registry")
}

// exporterURL is the address of the /metrics of pod's exporter container, on its pod IP and its
// port named metrics, which the host reaches; it requires the container to run image.
func exporterURL(t *testing.T, pod *corev1.Pod, image string) string {
	t.Helper()
	for _, c := range pod.Spec.Containers {
		if c.Name != exporterContainer {
			continue
		}
		if c.Image != image {
			t.Fatalf("pod %s's exporter runs %s, want %s", pod.Name, c.Image, image)
		}
		for _, p := range c.Ports {
			if p.Name == metricsPort {
				return "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(p.ContainerPort))) + "/metrics"
			}
		}
		t.Fatalf("pod %s's exporter declares no port %q: %+v", pod.Name, metricsPort, c.Ports)
	}
	t.Fatalf("pod %s has no container %q", pod.Name, exporterContainer)
	return ""
}

// series reads url's metrics and returns the sum of the series of the family name.
func series(ctx context.Context, url, name string) (float64, error) {
	body, err := httpGet(ctx, url)
	if err != nil {
		return 0, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", url, err)
	}
	family, ok := families[name]
	if !ok || len(family.GetMetric()) == 0 {
		return 0, fmt.Errorf("%s serves no %s", url, name)
	}
	var sum float64
	for _, m := range family.GetMetric() {
		sum += m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
	}
	return sum, nil
}

// requireSeries is nil when url serves the series name with want.
func requireSeries(ctx context.Context, url, name string, want float64) error {
	got, err := series(ctx, url, name)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s is %v, want %v", name, got, want)
	}
	return nil
}
