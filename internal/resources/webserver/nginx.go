package webserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

const (
	// NginxConfigKey is the ConfigMap key of nginx's server block, mounted over the image's own.
	NginxConfigKey = "default.conf"
	// NginxConfigPath is where both the official nginx images and Debian's nginx include it from.
	NginxConfigPath = "/etc/nginx/conf.d/" + NginxConfigKey
	// ConfigHashAnnotation on the pod template carries a hash of the server block, so that a change
	// of it rolls the pods: nginx reads its configuration only when it starts.
	ConfigHashAnnotation = "apps.appkeeper.dev/nginx-config-hash"
	// HealthPath answers 200 whenever nginx serves, whatever the content holds.
	HealthPath = "/healthz"
	// StubStatusAddress is where nginx serves its counters to the exporter when monitoring is on.
	StubStatusAddress = "127.0.0.1:8079"
	// StubStatusPath is the page of nginx's counters.
	StubStatusPath = "/stub_status"

	configVolume = "nginx-config"
)

// NginxConfig is the server block that makes nginx listen on port. It claims no default_server,
// which Debian's own site already holds on port 80; IPv4 only, since a pod without IPv6 would make
// a [::] listen fail at start. With stubStatus, a second server shows nginx's connection counters
// to the exporter in the pod, on the loopback only, so that the Service never exposes them.
func NginxConfig(port int32, stubStatus bool) string {
	conf := fmt.Sprintf(`# Written by appkeeper from the WebServer's spec.port; edits are undone.
server {
    listen %d;
    server_name _;
    root /usr/share/nginx/html;
    index index.html index.htm;

    location / {
        try_files $uri $uri/ =404;
    }

    location = %s {
        access_log off;
        default_type text/plain;
        return 200 "ok\n";
    }
}
`, port, HealthPath)
	if !stubStatus {
		return conf
	}
	return conf + fmt.Sprintf(`
# Written by appkeeper from the WebServer's spec.monitoring: the exporter's source.
server {
    listen %s;
    server_name _;
    access_log off;

    location = %s {
        stub_status;
    }
}
`, StubStatusAddress, StubStatusPath)
}

// nginxConfig is the server block of ws.
func nginxConfig(ws *appsv1alpha1.WebServer) string {
	return NginxConfig(ws.Spec.Port, ws.Spec.Monitoring.Enabled)
}

// ConfigMap is the desired ConfigMap holding the nginx server block of a WebServer.
func ConfigMap(ws *appsv1alpha1.WebServer) *corev1ac.ConfigMapApplyConfiguration {
	return corev1ac.ConfigMap(ws.ConfigMapName(), ws.Namespace).
		WithLabels(parts.Labels(ws.SelectorLabels(), appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(ws, appsv1alpha1.GroupVersion.WithKind("WebServer"))).
		WithData(map[string]string{NginxConfigKey: nginxConfig(ws)})
}

// configHash identifies the server block's content.
func configHash(conf string) string {
	sum := sha256.Sum256([]byte(conf))
	return hex.EncodeToString(sum[:8])
}

func configVolumeSource(ws *appsv1alpha1.WebServer) *corev1ac.VolumeApplyConfiguration {
	return corev1ac.Volume().WithName(configVolume).
		WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(ws.ConfigMapName()).
			WithItems(corev1ac.KeyToPath().WithKey(NginxConfigKey).WithPath(NginxConfigKey)))
}

// configMount replaces the image's default server, and only that file, so that the image's other
// includes stay.
func configMount() *corev1ac.VolumeMountApplyConfiguration {
	return corev1ac.VolumeMount().WithName(configVolume).WithMountPath(NginxConfigPath).
		WithSubPath(NginxConfigKey).WithReadOnly(true)
}
