package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// The exporters a Monitoring runs when it names no image: each application's standard Prometheus
// exporter, at a version whose flags the operator passes.
const (
	DefaultWebServerExporterImage = "nginx/nginx-prometheus-exporter:1.4.2"
	DefaultMemcachedExporterImage = "prom/memcached-exporter:v0.15.3"
	DefaultMySQLExporterImage     = "prom/mysqld-exporter:v0.17.2"
)

// The ports the exporters serve their metrics on, beside the application in its pod. While
// monitoring is on, a port the spec gives the application must be another: two listeners cannot
// share one port of a pod.
const (
	WebServerExporterPort = 9113
	MemcachedExporterPort = 9150
	MySQLExporterPort     = 9104
)

// ExporterContainerName names the exporter container in a pod that runs one.
const ExporterContainerName = "exporter"

// ExporterPortName names the exporter's port, the one Prometheus scrapes.
const ExporterPortName = "metrics"

// Monitoring runs the application's standard Prometheus exporter beside it, in each pod.
type Monitoring struct {
	// Enabled adds the exporter container, named exporter, with its port named metrics, to every
	// pod. A change rolls the pods. Defaults to false.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// Image of the exporter. Defaults to the kind's upstream exporter:
	// nginx/nginx-prometheus-exporter:1.4.2 for a WebServer, prom/memcached-exporter:v0.15.3 for a
	// Memcached, prom/mysqld-exporter:v0.17.2 for a MySQL. At most 1024 characters.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^((?:(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\\[(?:[a-fA-F0-9:]+)\\])(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$') && [self.find(r'^(?:[^/@]*/)*[^/:@]*')].all(n, [n.startsWith('localhost/') || n.matches(r'^[^/]*[.:A-Z][^/]*/')].all(d, [d ? n.substring(n.indexOf('/') + 1) : n].all(p, size(p) + (!p.contains('/') && (!d || n.startsWith('docker.io/') || n.startsWith('index.docker.io/')) ? 8 : 0) <= 255)))",message="spec.monitoring.image must be an image reference such as prom/mysqld-exporter:v0.17.2 or registry:5000/team/exporter:1.0: [registry[:port]/]name[:tag][@digest], the name in lowercase and its path at most 255 characters: the name less its registry, as library/name for a Docker Hub name of one component"
	// +optional
	Image string `json:"image,omitempty"`

	// Resources of the exporter container. Defaults to requests of 10m CPU and 16Mi memory and a
	// limit of 64Mi memory.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ExporterImage is the image the exporter runs: the spec's, else defaultImage.
func (m Monitoring) ExporterImage(defaultImage string) string {
	if m.Image != "" {
		return m.Image
	}
	return defaultImage
}
