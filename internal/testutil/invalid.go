package testutil

// InvalidSpec is a spec the API server must reject, and a part of the message it must give.
type InvalidSpec struct {
	Name    string
	Kind    string
	Spec    map[string]any
	Message string
}

// InvalidSpecs are the bad inputs of every kind, each with the field its error must name.
var InvalidSpecs = []InvalidSpec{
	{"negative replicas", "WebServer", map[string]any{"replicas": -1}, "spec.replicas"},
	{"empty image", "WebServer", map[string]any{"image": ""}, "spec.image must be a non-empty image reference without spaces"},
	{"image with spaces", "WebServer", map[string]any{"image": "nginx 1.23"}, "spec.image must be a non-empty image reference without spaces"},
	{"port zero", "WebServer", map[string]any{"port": 0}, "spec.port"},
	{"port too high", "WebServer", map[string]any{"port": 65536}, "spec.port"},
	{"nodePort with ClusterIP", "WebServer", map[string]any{"service": map[string]any{"type": "ClusterIP", "nodePort": 30080}}, "spec.service.nodePort is only allowed when spec.service.type is NodePort or LoadBalancer"},
	{"nodePort too low", "WebServer", map[string]any{"service": map[string]any{"type": "NodePort", "nodePort": 80}}, "spec.service.nodePort"},
	{"nodePort too high", "WebServer", map[string]any{"service": map[string]any{"type": "NodePort", "nodePort": 40000}}, "spec.service.nodePort"},
	{"unknown service type", "WebServer", map[string]any{"service": map[string]any{"type": "ExternalName"}}, "spec.service.type"},
	{"negative size", "Memcached", map[string]any{"size": -1}, "spec.size"},
	{"size above 256", "Memcached", map[string]any{"size": 257}, "spec.size"},
	{"memcached empty image", "Memcached", map[string]any{"image": ""}, "spec.image must be a non-empty image reference without spaces"},
	{"memcached port zero", "Memcached", map[string]any{"port": 0}, "spec.port"},
	{"memcached port too high", "Memcached", map[string]any{"port": 65536}, "spec.port"},
	{"maxConnections too low for memcached to start", "Memcached", map[string]any{"maxConnections": 10}, "spec.maxConnections"},
	{"memoryMB below what memcached starts with", "Memcached", map[string]any{"memoryMB": 1}, "spec.memoryMB"},
	{"podset negative replicas", "PodSet", podSetSpec(map[string]any{"replicas": -1}), "spec.replicas"},
	{"podset zero maxUnavailable", "PodSet", podSetSpec(map[string]any{"maxUnavailable": 0}), "spec.maxUnavailable"},
	{"podset without template", "PodSet", map[string]any{"replicas": 1}, "spec.template"},
	{"podset template without spec", "PodSet", map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": "web"}}}}, "spec.template.spec"},
	{"podset without containers", "PodSet", map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{}}}},
		"spec.template.spec.containers must list at least one container"},
}

// podSetSpec is a valid PodSet spec with fields replaced by those of with.
func podSetSpec(with map[string]any) map[string]any {
	spec := map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}},
	}}}
	for k, v := range with {
		spec[k] = v
	}
	return spec
}
