package testutil

import "strings"

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
	{"mysql empty image", "MySQL", map[string]any{"image": ""}, "spec.image must be a non-empty image reference without spaces"},
	{"mysql image with spaces", "MySQL", map[string]any{"image": "mysql 8.4"}, "spec.image must be a non-empty image reference without spaces"},
	{"mysql database name with a dash", "MySQL", map[string]any{"database": "my-db"}, "spec.database"},
	{"mysql database name too long", "MySQL", map[string]any{"database": strings.Repeat("d", 65)}, "spec.database"},
	{"mysql user name with a space", "MySQL", map[string]any{"user": "web user"}, "spec.user"},
	{"mysql user root", "MySQL", map[string]any{"user": "root"}, "spec.user must not be root"},
	{"mysql config line opening a section", "MySQL", map[string]any{"config": []any{"[client]"}},
		"spec.config entries must be single my.cnf option lines, not sections"},
	{"mysql config line hiding a section after a newline", "MySQL", map[string]any{"config": []any{"max_connections=200\n[client]"}},
		"spec.config entries must be single my.cnf option lines, not sections"},
	{"mysql config line opening a section after spaces", "MySQL", map[string]any{"config": []any{"  [client]"}},
		"spec.config entries must be single my.cnf option lines, not sections"},
	{"mysql zero storage", "MySQL", map[string]any{"storage": map[string]any{"size": "0"}}, "spec.storage.size must be above zero"},
	{"mysql negative storage", "MySQL", map[string]any{"storage": map[string]any{"size": "-1Gi"}}, "spec.storage.size must be above zero"},
	{"mysql unknown deletionPolicy", "MySQL", map[string]any{"deletionPolicy": "Keep"}, "spec.deletionPolicy"},
	{"mysql credentialsSecretRef without a name", "MySQL", map[string]any{"credentialsSecretRef": map[string]any{"name": ""}}, "spec.credentialsSecretRef.name"},
	{"wordpress empty image", "WordPress", map[string]any{"image": ""}, "spec.image must be a non-empty image reference without spaces"},
	{"wordpress image with spaces", "WordPress", map[string]any{"image": "wordpress 6.8"}, "spec.image must be a non-empty image reference without spaces"},
	{"wordpress negative replicas", "WordPress", map[string]any{"replicas": -1}, "spec.replicas"},
	{"wordpress two replicas on a ReadWriteOnce volume", "WordPress", map[string]any{"replicas": 2},
		"spec.storage.accessModes must include ReadWriteMany when spec.replicas is above 1"},
	{"wordpress both mysqlRef and mysql", "WordPress", map[string]any{"database": map[string]any{"mysqlRef": map[string]any{"name": "db"}, "mysql": map[string]any{}}},
		"spec.database must set exactly one of mysqlRef and mysql"},
	{"wordpress neither mysqlRef nor mysql", "WordPress", map[string]any{"database": map[string]any{}},
		"spec.database must set exactly one of mysqlRef and mysql"},
	{"wordpress unknown deletionPolicy", "WordPress", map[string]any{"deletionPolicy": "Keep"}, "spec.deletionPolicy"},
	{"wordpress zero storage", "WordPress", map[string]any{"storage": map[string]any{"size": 0}}, "spec.storage.size must be above zero"},
	{"wordpress inline mysql zero storage", "WordPress", map[string]any{"database": map[string]any{"mysql": map[string]any{"storage": map[string]any{"size": "0Gi"}}}},
		"spec.database.mysql.storage.size"},
	{"wordpress unknown access mode", "WordPress", map[string]any{"storage": map[string]any{"accessModes": []any{"ReadOnlyMany"}}}, "spec.storage.accessModes[0]"},
	{"wordpress inline mysql bad image", "WordPress", map[string]any{"database": map[string]any{"mysql": map[string]any{"image": "mysql 8.4"}}}, "spec.database.mysql.image"},
	{"wordpress inline mysql bad database name", "WordPress", map[string]any{"database": map[string]any{"mysql": map[string]any{"database": "wp-db"}}}, "spec.database.mysql.database"},
	{"wordpress inline mysql user root", "WordPress", map[string]any{"database": map[string]any{"mysql": map[string]any{"user": "root"}}}, "spec.database.mysql.user"},
	{"wordpress inline mysql unknown deletionPolicy", "WordPress", map[string]any{"database": map[string]any{"mysql": map[string]any{"deletionPolicy": "Keep"}}},
		"spec.database.mysql.deletionPolicy"},
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
