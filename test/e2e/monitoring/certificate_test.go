//go:build e2e

package monitoring

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/big"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// TestPrometheusVerifiesTheMetricsCertificate: with --metrics-cert-dir, as the chart sets it from
// metricsCertificate.secretName, the operator serves the certificate found there, which Prometheus
// verifies against its authority under the Service's name, as the chart's ServiceMonitor then
// asks; once the files are replaced, as the kubelet does when cert-manager renews the Secret, new
// connections get the new certificate without a restart.
func TestPrometheusVerifiesTheMetricsCertificate(t *testing.T) {
	applyInstallManifest(t)
	authority := testcluster.NewCA(t)
	certDir := t.TempDir()
	serverName := "appkeeper-metrics." + namespace + ".svc"
	first := authority.Issue(t, certDir, serverName)
	kubeconfig := testcluster.ImpersonatingKubeconfig(t, cluster.KubeconfigPath, "system:serviceaccount:"+namespace+":"+serviceAccount)
	operator := testcluster.StartOperator(t, "appkeeper-certified", kubeconfig, filepath.Join(cluster.Dir, "logs"), "--metrics-cert-dir="+certDir)
	if serial := servedSerial(t, operator.MetricsURL, authority.Pool, serverName); serial.Cmp(first.Serial) != 0 {
		t.Fatalf("the metrics endpoint serves certificate %s, want the one in --metrics-cert-dir, %s", serial, first.Serial)
	}
	prometheus := testcluster.StartPrometheus(t, testservers.PrometheusOptions{
		Dir: filepath.Join(cluster.Dir, "prometheus-verifying"),
		Targets: []testservers.ScrapeTarget{{
			Job: job, URL: operator.MetricsURL, BearerToken: metricsReaderToken(t),
			CAFile: first.CAFile, ServerName: serverName, HonorLabels: true,
		}},
	})
	waitForSample(t, prometheus, fmt.Sprintf(`up{job=%q} == 1`, job))

	renewed, began := authority.Issue(t, certDir, serverName), time.Now()
	await.Eventually(t, timeout, func(context.Context) error {
		if serial := servedSerial(t, operator.MetricsURL, authority.Pool, serverName); serial.Cmp(renewed.Serial) != 0 {
			return fmt.Errorf("the metrics endpoint serves certificate %s, want the renewed %s", serial, renewed.Serial)
		}
		return nil
	})
	t.Logf("the renewed certificate served %s after its files were replaced", time.Since(began).Round(time.Millisecond))
}

// servedSerial is the serial number of the certificate the endpoint presents, verified against
// roots for serverName.
func servedSerial(t *testing.T, endpoint string, roots *x509.CertPool, serverName string) *big.Int {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("the metrics endpoint's certificate does not verify: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}
