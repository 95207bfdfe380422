package webserver

import (
	"fmt"
	"strings"
	"testing"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestNginxListensOnSpecPort(t *testing.T) {
	for _, port := range []int32{8080, 80, 9000} {
		ws := webServer(func(ws *appsv1alpha1.WebServer) { ws.Spec.Port = port })
		cm := ConfigMap(ws)
		conf := cm.Data[NginxConfigKey]
		if *cm.Name != "web-nginx" || *cm.Namespace != "shop" || *cm.OwnerReferences[0].UID != "uid-1" {
			t.Errorf("ConfigMap %s/%s owned by %v", *cm.Namespace, *cm.Name, cm.OwnerReferences)
		}
		for _, want := range []string{fmt.Sprintf("listen %d;", port), "root /usr/share/nginx/html;", "location = " + HealthPath} {
			if !strings.Contains(conf, want) {
				t.Errorf("port %d: config lacks %q:\n%s", port, want, conf)
			}
		}
		if strings.Contains(conf, "default_server") || strings.Contains(conf, "[::]") {
			t.Errorf("config claims what a Debian nginx or an IPv4-only pod refuses:\n%s", conf)
		}
		if strings.Count(conf, "{") != strings.Count(conf, "}") {
			t.Errorf("unbalanced braces:\n%s", conf)
		}

		dep := Deployment(ws)
		pod := dep.Spec.Template.Spec
		c := pod.Containers[0]
		if *c.Ports[0].ContainerPort != port || *c.ReadinessProbe.HTTPGet.Path != HealthPath {
			t.Errorf("container port %d, readiness path %s", *c.Ports[0].ContainerPort, *c.ReadinessProbe.HTTPGet.Path)
		}
		if len(c.VolumeMounts) != 1 || *c.VolumeMounts[0].MountPath != "/etc/nginx/conf.d/default.conf" ||
			*c.VolumeMounts[0].SubPath != NginxConfigKey || !*c.VolumeMounts[0].ReadOnly {
			t.Errorf("volume mounts = %+v", c.VolumeMounts)
		}
		if len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil || *pod.Volumes[0].ConfigMap.Name != "web-nginx" ||
			*pod.Volumes[0].Name != *c.VolumeMounts[0].Name {
			t.Errorf("volumes = %+v", pod.Volumes)
		}
	}
}

func TestConfigHashRollsPodsOnPortChange(t *testing.T) {
	hash := func(port int32, annotations map[string]string) map[string]string {
		return Deployment(webServer(func(ws *appsv1alpha1.WebServer) {
			ws.Spec.Port = port
			ws.Spec.PodAnnotations = annotations
		})).Spec.Template.Annotations
	}
	a, b := hash(8080, nil), hash(9000, nil)
	if a[ConfigHashAnnotation] == "" || a[ConfigHashAnnotation] == b[ConfigHashAnnotation] {
		t.Errorf("hash %q for 8080 and %q for 9000, want two different hashes", a[ConfigHashAnnotation], b[ConfigHashAnnotation])
	}
	if again := hash(8080, nil); again[ConfigHashAnnotation] != a[ConfigHashAnnotation] {
		t.Error("the hash changes without a change of the config")
	}
	user := hash(8080, map[string]string{"team": "web", ConfigHashAnnotation: "mine"})
	if user["team"] != "web" || user[ConfigHashAnnotation] != a[ConfigHashAnnotation] {
		t.Errorf("pod annotations = %v, want the user's beside the operator's hash", user)
	}
}
