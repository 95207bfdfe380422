package operator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetricsCertDirMustHoldTheCertificate: a directory given without its files stops the manager
// with an error naming the flag and the file, rather than serving a certificate nobody can verify.
func TestMetricsCertDirMustHoldTheCertificate(t *testing.T) {
	dir := t.TempDir()
	o := Options{MetricsAddr: ":8443", SecureMetrics: true, MetricsCertDir: dir}
	if _, err := o.metricsServer(); err == nil || !strings.Contains(err.Error(), "--metrics-cert-dir") || !strings.Contains(err.Error(), "tls.crt") {
		t.Errorf("an empty --metrics-cert-dir: %v, want an error naming the flag and tls.crt", err)
	}
	for _, name := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("pem"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	server, err := o.metricsServer()
	if err != nil || server.CertDir != dir {
		t.Errorf("metrics server %+v, %v; want it to serve from %s", server, err, dir)
	}
	o.SecureMetrics = false
	if _, err := o.metricsServer(); err == nil || !strings.Contains(err.Error(), "--metrics-secure") {
		t.Errorf("--metrics-cert-dir over plain HTTP: %v, want an error naming --metrics-secure", err)
	}
}
