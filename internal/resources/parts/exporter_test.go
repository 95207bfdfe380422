package parts

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestExporterContainer(t *testing.T) {
	exporter := Exporter{DefaultImage: "prom/some-exporter:v1", Port: 9100, Args: []string{"--source=127.0.0.1:1"}}
	own := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
	tests := []struct {
		name       string
		monitoring appsv1alpha1.Monitoring
		wantImage  string
		wantMemory string
		wantCPU    string
	}{
		{name: "off", monitoring: appsv1alpha1.Monitoring{}},
		{name: "on with defaults", monitoring: appsv1alpha1.Monitoring{Enabled: true},
			wantImage: "prom/some-exporter:v1", wantMemory: "64Mi", wantCPU: "10m"},
		{name: "on with an image and resources of its own",
			monitoring: appsv1alpha1.Monitoring{Enabled: true, Image: "registry:5000/exporter:2", Resources: &own},
			wantImage:  "registry:5000/exporter:2", wantMemory: "128Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ExporterContainer(tt.monitoring, exporter)
			if tt.wantImage == "" {
				if c != nil {
					t.Fatalf("monitoring off builds a container: %+v", c)
				}
				return
			}
			if *c.Name != "exporter" || *c.Image != tt.wantImage || len(c.Args) != 1 || c.Args[0] != "--source=127.0.0.1:1" {
				t.Errorf("name/image/args = %s/%s/%v", *c.Name, *c.Image, c.Args)
			}
			if len(c.Ports) != 1 || *c.Ports[0].Name != "metrics" || *c.Ports[0].ContainerPort != 9100 {
				t.Errorf("ports = %+v, want metrics 9100", c.Ports)
			}
			if got := (*c.Resources.Limits)[corev1.ResourceMemory]; got.String() != tt.wantMemory {
				t.Errorf("memory limit = %s, want %s", got.String(), tt.wantMemory)
			}
			var requests corev1.ResourceList
			if c.Resources.Requests != nil {
				requests = *c.Resources.Requests
			}
			if got, ok := requests[corev1.ResourceCPU]; ok != (tt.wantCPU != "") || (ok && got.String() != tt.wantCPU) {
				t.Errorf("cpu request = %v, want %q", requests, tt.wantCPU)
			}
			checkRestricted(t, c.SecurityContext)
			if p := c.ReadinessProbe.HTTPGet; p == nil || *p.Path != "/metrics" || p.Port.StrVal != "metrics" {
				t.Errorf("readiness probe = %+v, want GET /metrics on port metrics", c.ReadinessProbe)
			}
		})
	}
}

func checkRestricted(t *testing.T, sc *corev1ac.SecurityContextApplyConfiguration) {
	t.Helper()
	if !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" ||
		*sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("security context not restricted: %+v", sc)
	}
}
