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
}
