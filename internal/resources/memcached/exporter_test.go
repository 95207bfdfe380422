package memcached

import (
	"strings"
	"testing"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestExporter(t *testing.T) {
	tests := []struct {
		name       string
		monitoring bool
		port       int32
		wantArgs   string
	}{
		{name: "off", port: 11211},
		{name: "on", monitoring: true, port: 11211, wantArgs: "--memcached.address=127.0.0.1:11211"},
		{name: "on, memcached on another port", monitoring: true, port: 11311, wantArgs: "--memcached.address=127.0.0.1:11311"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := memcached(func(mc *appsv1alpha1.Memcached) {
				mc.Spec.Monitoring.Enabled = tt.monitoring
				mc.Spec.Port = tt.port
			})
			containers := StatefulSet(mc).Spec.Template.Spec.Containers
			if !tt.monitoring {
				if len(containers) != 1 {
					t.Fatalf("%d containers with monitoring off, want memcached alone", len(containers))
				}
				return
			}
			if len(containers) != 2 {
				t.Fatalf("%d containers, want memcached and exporter", len(containers))
			}
			c := containers[1]
			if *c.Name != "exporter" || *c.Image != appsv1alpha1.DefaultMemcachedExporterImage ||
				*c.Ports[0].Name != "metrics" || *c.Ports[0].ContainerPort != 9150 || strings.Join(c.Args, " ") != tt.wantArgs {
				t.Errorf("exporter name/image/port/args = %s/%s/%d/%v", *c.Name, *c.Image, *c.Ports[0].ContainerPort, c.Args)
			}
		})
	}
}
