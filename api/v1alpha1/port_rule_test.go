package v1alpha1_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/config/crd"
)

// monitoringOn is true when the spec runs the exporter.
const monitoringOn = "!has(self.monitoring) || !has(self.monitoring.enabled) || !self.monitoring.enabled || "

// TestPortRulesKeepTheExportersPortFree keeps the admission rules that refuse a port the exporter
// already holds on the very port the operator gives the exporter, so that neither can change alone.
func TestPortRulesKeepTheExportersPortFree(t *testing.T) {
	mysqlRule := func(port int) string {
		return monitoringOn + fmt.Sprintf(`!has(self.config) || !self.config.exists(l, l.contains('%[1]d') && `+
			`l.matches(r'(?i)^\s*(loose[-_])?(mysqlx|admin|extra)[-_]port\s*=\s*\D?0*%[1]d(\D|$)'))`, port)
	}
	tests := []struct {
		kind, field string
		port        int
		rule        string
	}{
		{"WebServer", "spec.port", appsv1alpha1.WebServerExporterPort, monitoringOn + fmt.Sprintf("!has(self.port) || self.port != %d", appsv1alpha1.WebServerExporterPort)},
		{"Memcached", "spec.port", appsv1alpha1.MemcachedExporterPort, monitoringOn + fmt.Sprintf("!has(self.port) || self.port != %d", appsv1alpha1.MemcachedExporterPort)},
		{"MySQL", "spec.config", appsv1alpha1.MySQLExporterPort, mysqlRule(appsv1alpha1.MySQLExporterPort)},
	}
	crds, err := crd.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		found := false
		for _, r := range specSchema(t, crds, tt.kind).XValidations {
			if r.Rule != tt.rule {
				continue
			}
			found = true
			prefix := fmt.Sprintf("%s must not ", tt.field)
			for _, want := range []string{prefix, fmt.Sprintf(" %d while spec.monitoring.enabled is true", tt.port), fmt.Sprintf("port %d of the same pod", tt.port)} {
				if !strings.Contains(r.Message, want) {
					t.Errorf("%s rule message %q does not say %q", tt.kind, r.Message, want)
				}
			}
			if want := "." + strings.TrimPrefix(tt.field, "spec."); r.FieldPath != want {
				t.Errorf("%s rule fieldPath = %q, want %q", tt.kind, r.FieldPath, want)
			}
		}
		if !found {
			t.Errorf("the %s CRD has no rule %s", tt.kind, tt.rule)
		}
	}
}
