package webserver

import (
	"strings"
	"testing"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestExporter(t *testing.T) {
	tests := []struct {
		name           string
		monitoring     bool
		wantContainers []string
		wantStubStatus bool
	}{
		{name: "off", wantContainers: []string{"nginx"}},
		{name: "on", monitoring: true, wantContainers: []string{"nginx", "exporter"}, wantStubStatus: true},
	}
	hashes := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := webServer(func(ws *appsv1alpha1.WebServer) { ws.Spec.Monitoring.Enabled = tt.monitoring })
			pod := Deployment(ws).Spec.Template
			var names []string
			for _, c := range pod.Spec.Containers {
				names = append(names, *c.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.wantContainers, ",") {
				t.Fatalf("containers = %v, want %v", names, tt.wantContainers)
			}
			if tt.monitoring {
				c := pod.Spec.Containers[1]
				if *c.Image != appsv1alpha1.DefaultWebServerExporterImage || *c.Ports[0].ContainerPort != 9113 ||
					strings.Join(c.Args, " ") != "--nginx.scrape-uri=http://127.0.0.1:8079/stub_status" {
					t.Errorf("exporter image/port/args = %s/%d/%v", *c.Image, *c.Ports[0].ContainerPort, c.Args)
				}
			}
			conf := ConfigMap(ws).Data[NginxConfigKey]
			hasStub := strings.Contains(conf, "listen 127.0.0.1:8079;") && strings.Contains(conf, "location = /stub_status {\n        stub_status;")
			if hasStub != tt.wantStubStatus || (!tt.wantStubStatus && strings.Contains(conf, "stub_status")) {
				t.Errorf("stub_status server present = %v, want %v:\n%s", hasStub, tt.wantStubStatus, conf)
			}
			hashes[pod.Annotations[ConfigHashAnnotation]] = true
		})
	}
	if len(hashes) != 2 {
		t.Error("turning monitoring on leaves nginx's config hash: the pods would keep the server block without stub_status")
	}
}
