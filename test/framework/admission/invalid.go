package admission

import (
	"fmt"
	"strings"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// InvalidSpec is a spec the API server must reject, and a part of the message it must give.
type InvalidSpec struct {
	Name    string
	Kind    string
	Spec    map[string]any
	Message string
}

// InvalidSpecs are the bad inputs of every kind, each with the field its error must name.
var InvalidSpecs = append([]InvalidSpec{
	{"negative replicas", "WebServer", map[string]any{"replicas": -1}, "spec.replicas"},
	{"empty image", "WebServer", map[string]any{"image": ""}, imageRefused},
	{"image with spaces", "WebServer", map[string]any{"image": "nginx 1.23"}, imageRefused},
	{"image with a capital in its name", "WebServer", map[string]any{"image": "Nginx:1.27"}, imageRefused},
	{"image with two tags", "WebServer", map[string]any{"image": "nginx:1.27:2"}, imageRefused},
	{"exporter image with spaces", "WebServer", monitoring("nginx exporter"), exporterImageRefused},
	{"memcached exporter image with a capital", "Memcached", monitoring("prom/Memcached-exporter:v0.15.3"), exporterImageRefused},
	{"mysql exporter image with two tags", "MySQL", monitoring("prom/mysqld-exporter:v0.17:2"), exporterImageRefused},
	{"exporter image too long", "WebServer", monitoring("exporter:" + strings.Repeat("1", 1024)), "spec.monitoring.image: Too long"},
	{"image too long", "WebServer", map[string]any{"image": "nginx:" + strings.Repeat("1", 1024)}, "spec.image: Too long"},
	{"port zero", "WebServer", map[string]any{"port": 0}, "spec.port"},
	{"port too high", "WebServer", map[string]any{"port": 65536}, "spec.port"},
	{"nodePort with ClusterIP", "WebServer", map[string]any{"service": map[string]any{"type": "ClusterIP", "nodePort": 30080}}, "spec.service.nodePort is only allowed when spec.service.type is NodePort or LoadBalancer"},
	{"nodePort too low", "WebServer", map[string]any{"service": map[string]any{"type": "NodePort", "nodePort": 80}}, "spec.service.nodePort"},
	{"nodePort too high", "WebServer", map[string]any{"service": map[string]any{"type": "NodePort", "nodePort": 40000}}, "spec.service.nodePort"},
	{"unknown service type", "WebServer", map[string]any{"service": map[string]any{"type": "ExternalName"}}, "spec.service.type"},
	{"negative size", "Memcached", map[string]any{"size": -1}, "spec.size"},
	{"size above 256", "Memcached", map[string]any{"size": 257}, "spec.size"},
	{"memcached empty image", "Memcached", map[string]any{"image": ""}, imageRefused},
	{"memcached port zero", "Memcached", map[string]any{"port": 0}, "spec.port"},
	{"memcached port too high", "Memcached", map[string]any{"port": 65536}, "spec.port"},
	{"maxConnections too low for memcached to start", "Memcached", map[string]any{"maxConnections": 10}, "spec.maxConnections"},
	{"memoryMB below what memcached starts with", "Memcached", map[string]any{"memoryMB": 1}, "spec.memoryMB"},
	{"podset negative replicas", "PodSet", podSetSpec(map[string]any{"replicas": -1}), "spec.replicas"},
	{"podset zero maxUnavailable", "PodSet", podSetSpec(map[string]any{"maxUnavailable": 0}), "spec.maxUnavailable"},
	{"podset without template", "PodSet", map[string]any{"replicas": 1}, "spec.template"},
	{"podset template without spec", "PodSet", map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": "web"}}}}, "spec.template.spec"},
	{"podset template of pods that exit", "PodSet", podSetSpec(map[string]any{"template": map[string]any{"spec": map[string]any{
		"restartPolicy": "OnFailure", "containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}},
	}}}), "spec.template.spec.restartPolicy must be Always"},
	{"podset template of pods with a deadline", "PodSet", podSetSpec(map[string]any{"template": map[string]any{"spec": map[string]any{
		"activeDeadlineSeconds": 60, "containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}},
	}}}), "spec.template.spec.activeDeadlineSeconds must not be set"},
	{"podset without containers", "PodSet", map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{}}}},
		"spec.template.spec.containers must list at least one container"},
	{"mysql empty image", "MySQL", map[string]any{"image": ""}, imageRefused},
	{"mysql image with spaces", "MySQL", map[string]any{"image": "mysql 8.4"}, imageRefused},
	{"mysql image with an empty tag", "MySQL", map[string]any{"image": "mysql:"}, imageRefused},
	{"mysql image with a short digest", "MySQL", map[string]any{"image": "mysql:8.4@sha256:0123"}, imageRefused},
	{"mysql image with a capital in its name", "MySQL", map[string]any{"image": "registry:5000/MySQL:8.4"}, imageRefused},
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
	{"mysql members zero", "MySQL", map[string]any{"members": 0}, "spec.members"},
	{"mysql members six", "MySQL", map[string]any{"members": 6}, "spec.members"},
	{"mysql durability unknown", "MySQL", map[string]any{"members": 3, "replication": map[string]any{"durability": "Sometimes"}}, "spec.replication.durability"},
	{"mysql ackTimeout with Required", "MySQL", map[string]any{"members": 3, "replication": map[string]any{"ackTimeout": "1s"}}, ackTimeoutRefused},
	{"mysql ackTimeout below 100ms", "MySQL", map[string]any{"members": 3, "replication": map[string]any{"durability": "Preferred", "ackTimeout": "50ms"}},
		"spec.replication.ackTimeout must be from 100ms to 1h"},
	{"mysql ackTimeout not a duration", "MySQL", map[string]any{"members": 3, "replication": map[string]any{"durability": "Preferred", "ackTimeout": "soon"}},
		"spec.replication.ackTimeout"},
	{"mysql failoverDelay above 5m", "MySQL", map[string]any{"members": 3, "replication": map[string]any{"failoverDelay": "6m"}},
		"spec.replication.failoverDelay must be from 0s to 5m"},
	{"mysql failoverDelay negative", "MySQL", map[string]any{"members": 3, "replication": map[string]any{"failoverDelay": "-1s"}},
		"spec.replication.failoverDelay must be from 0s to 5m"},
	{"mysql cluster config setting server_id", "MySQL", map[string]any{"members": 3, "config": []any{"server_id=7"}}, clusterConfigRefused},
	{"mysql cluster config turning the binary log off", "MySQL", map[string]any{"members": 3, "config": []any{"skip-log-bin"}}, clusterConfigRefused},
	{"mysql cluster config setting statement-based binlog", "MySQL", map[string]any{"members": 2, "config": []any{"binlog_format = STATEMENT"}}, clusterConfigRefused},
	{"mysql cluster config turning gtid strict mode off", "MySQL", map[string]any{"members": 3, "config": []any{"loose-gtid-strict-mode=0"}}, clusterConfigRefused},
	{"mysql cluster config opening the replicas", "MySQL", map[string]any{"members": 3, "config": []any{"read_only=0"}}, clusterConfigRefused},
	{"mysql cluster config turning semi-sync off", "MySQL", map[string]any{"members": 3, "config": []any{"rpl_semi_sync_slave_enabled=OFF"}}, clusterConfigRefused},
	{"mysql cluster config relaxing sync_binlog", "MySQL", map[string]any{"members": 3, "config": []any{"sync_binlog=0"}}, clusterConfigRefused},
	{"wordpress inline mysql members six", "WordPress", inlineMySQL(map[string]any{"members": 6}), "spec.database.mysql.members"},
	{"mysql config line setting port", "MySQL", map[string]any{"config": []any{"max_connections=200", "port=3307"}}, configRefused},
	{"mysql config line setting port with spaces", "MySQL", map[string]any{"config": []any{"max_connections=200", "  port = 3307"}}, configRefused},
	{"mysql config line setting loose port", "MySQL", map[string]any{"config": []any{"max_connections=200", "loose_port=3307"}}, configRefused},
	{"mysql config line setting socket", "MySQL", map[string]any{"config": []any{"max_connections=200", "socket=/tmp/mysql.sock"}}, configRefused},
	{"mysql config line setting bind-address", "MySQL", map[string]any{"config": []any{"max_connections=200", "bind_address=127.0.0.1"}}, configRefused},
	{"mysql config line setting bind-address in capitals", "MySQL", map[string]any{"config": []any{"max_connections=200", "Bind-Address=0.0.0.0"}}, configRefused},
	{"mysql config line setting skip-networking", "MySQL", map[string]any{"config": []any{"max_connections=200", "skip-networking"}}, configRefused},
	{"mysql config line setting skip_networking=1", "MySQL", map[string]any{"config": []any{"max_connections=200", "skip_networking=1"}}, configRefused},
	{"mysql config line setting loose-skip-networking", "MySQL", map[string]any{"config": []any{"max_connections=200", "loose-skip-networking"}}, configRefused},
	{"mysql config line setting datadir", "MySQL", map[string]any{"config": []any{"max_connections=200", "datadir=/tmp"}}, configRefused},
	{"mysql config line setting user", "MySQL", map[string]any{"config": []any{"max_connections=200", "user=root"}}, configRefused},
	{"mysql config line setting user without a value", "MySQL", map[string]any{"config": []any{"max_connections=200", "user"}}, configRefused},
	{"mysql config line setting !include", "MySQL", map[string]any{"config": []any{"max_connections=200", "!include /etc/other.cnf"}}, configRefused},
	{"mysql config line setting !includedir", "MySQL", map[string]any{"config": []any{"max_connections=200", "  !includedir /etc/mysql/more.d"}}, configRefused},
	{"mysql zero storage", "MySQL", map[string]any{"storage": map[string]any{"size": "0"}}, "spec.storage.size must be above zero"},
	{"mysql negative storage", "MySQL", map[string]any{"storage": map[string]any{"size": "-1Gi"}}, "spec.storage.size must be above zero"},
	{"mysql unknown deletionPolicy", "MySQL", map[string]any{"deletionPolicy": "Keep"}, "spec.deletionPolicy"},
	{"mysql credentialsSecretRef without a name", "MySQL", map[string]any{"credentialsSecretRef": map[string]any{"name": ""}}, "spec.credentialsSecretRef.name"},
	{"wordpress empty image", "WordPress", map[string]any{"image": ""}, imageRefused},
	{"wordpress image with spaces", "WordPress", map[string]any{"image": "wordpress 6.8"}, imageRefused},
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
	{"mysql config line setting init-file", "MySQL", map[string]any{"config": []any{"init_file=/tmp/x.sql"}}, configRefused},
	{"mysql backup without schedule", "MySQL", map[string]any{"backup": map[string]any{"storage": s3Storage(nil)}}, "spec.backup.schedule"},
	{"mysql backup storage with s3 and volume", "MySQL", backupSpec(map[string]any{"s3": s3Storage(nil)["s3"], "volume": map[string]any{"claimName": "b"}}),
		"backup storage must set exactly one of s3 and volume"},
	{"mysql backup storage with neither", "MySQL", backupSpec(map[string]any{}), "backup storage must set exactly one of s3 and volume"},
	{"mysql backup s3 endpoint without scheme", "MySQL", backupSpec(s3Storage(map[string]any{"endpoint": "minio:9000"})),
		"s3.endpoint must be an http:// or https:// URL"},
	{"mysql backup s3 bucket in capitals", "MySQL", backupSpec(s3Storage(map[string]any{"bucket": "Backups"})), "spec.backup.storage.s3.bucket"},
	{"mysql backup s3 prefix climbing out", "MySQL", backupSpec(s3Storage(map[string]any{"prefix": "../other"})), "s3.prefix must not start with / nor contain .."},
	{"mysql backup s3 without credentials", "MySQL", backupSpec(map[string]any{"s3": map[string]any{"endpoint": "http://s3:7070", "bucket": "backups"}}),
		"spec.backup.storage.s3.credentialsSecretRef"},
	{"mysql backup retention that keeps nothing", "MySQL", map[string]any{"backup": map[string]any{"schedule": "0 2 * * *", "storage": s3Storage(nil),
		"retention": map[string]any{"keepLast": 0}}}, "spec.backup.retention.keepLast"},
	{"mysql backup retention empty", "MySQL", map[string]any{"backup": map[string]any{"schedule": "0 2 * * *", "storage": s3Storage(nil),
		"retention": map[string]any{}}}, "backup retention must set keepLast, maxAge or both"},
	{"mysql restore from a name and a location", "MySQL", map[string]any{"restore": map[string]any{"backupName": "b",
		"location": map[string]any{"storage": s3Storage(nil), "key": "ns/db/b"}}}, "spec.restore must set exactly one of backupName, location and mysqlName"},
	{"mysql restore from a backup and a MySQL", "MySQL", map[string]any{"restore": map[string]any{"backupName": "b", "mysqlName": "db",
		"pointInTime": map[string]any{"time": "2026-11-27T10:41:59Z"}}}, "spec.restore must set exactly one of backupName, location and mysqlName"},
	{"mysql restore from a MySQL without a point in time", "MySQL", map[string]any{"restore": map[string]any{"mysqlName": "db"}},
		"spec.restore.mysqlName needs spec.restore.pointInTime"},
	{"mysql restore from nothing", "MySQL", map[string]any{"restore": map[string]any{}}, "spec.restore must set exactly one of backupName, location and mysqlName"},
	{"mysql restore to a time and a GTID", "MySQL", map[string]any{"restore": map[string]any{"backupName": "b",
		"pointInTime": map[string]any{"time": "2026-11-27T10:41:59Z", "gtid": "0-1-1234"}}}, "spec.restore.pointInTime must set exactly one of time and gtid"},
	{"mysql restore to no point", "MySQL", map[string]any{"restore": map[string]any{"backupName": "b", "pointInTime": map[string]any{}}},
		"spec.restore.pointInTime must set exactly one of time and gtid"},
	{"mysql restore to a GTID that is not one", "MySQL", map[string]any{"restore": map[string]any{"backupName": "b",
		"pointInTime": map[string]any{"gtid": "0-1"}}}, "spec.restore.pointInTime.gtid"},
	{"mysql restore to a time that is not RFC 3339", "MySQL", map[string]any{"restore": map[string]any{"backupName": "b",
		"pointInTime": map[string]any{"time": "yesterday at ten"}}}, "spec.restore.pointInTime.time"},
	{"mysql restore location key climbing out", "MySQL", map[string]any{"restore": map[string]any{
		"location": map[string]any{"storage": s3Storage(nil), "key": "../b"}}}, "key must not start with / nor contain .."},
	{"mysqlbackup without a mysql", "MySQLBackup", map[string]any{}, "spec.mysqlName"},
	{"wordpressbackup without a wordpress", "WordPressBackup", map[string]any{}, "spec.wordpressName"},
	{"wordpressbackup storage with neither s3 nor volume", "WordPressBackup", map[string]any{"wordpressName": "blog", "storage": map[string]any{}},
		"backup storage must set exactly one of s3 and volume"},
	{"mysqlbackup storage with s3 and volume", "MySQLBackup", map[string]any{"mysqlName": "db",
		"storage": map[string]any{"s3": s3Storage(nil)["s3"], "volume": map[string]any{"claimName": "b"}}}, "backup storage must set exactly one of s3 and volume"},
	{"mysqlbackup encryption without key", "MySQLBackup", map[string]any{"mysqlName": "db",
		"encryption": map[string]any{"keySecretRef": map[string]any{"name": "k"}}}, "spec.encryption.keySecretRef.key"},
	{"wordpress inline mysql config line setting port", "WordPress", map[string]any{"database": map[string]any{"mysql": map[string]any{"config": []any{"port=3307"}}}},
		configRefused},
	{"wordpress inline mysql unknown deletionPolicy", "WordPress", map[string]any{"database": map[string]any{"mysql": map[string]any{"deletionPolicy": "Keep"}}},
		"spec.database.mysql.deletionPolicy"},
	{"wordpress restore onto a MySQL it does not run", "WordPress", map[string]any{"database": map[string]any{"mysqlRef": map[string]any{"name": "db"}},
		"restore": map[string]any{"backupName": "monday"}}, "spec.restore needs the site's own MySQL (spec.database.mysql)"},
	{"wordpress restore without a restore point", "WordPress", map[string]any{"restore": map[string]any{"backupName": ""}}, "spec.restore.backupName"},
	{"webserver port of the exporter with monitoring on", "WebServer", monitored(map[string]any{"port": appsv1alpha1.WebServerExporterPort}),
		portTaken("spec.port", appsv1alpha1.WebServerExporterPort)},
	{"memcached port of the exporter with monitoring on", "Memcached", monitored(map[string]any{"port": appsv1alpha1.MemcachedExporterPort}),
		portTaken("spec.port", appsv1alpha1.MemcachedExporterPort)},
	{"mysql X protocol on the exporter's port with monitoring on", "MySQL", monitored(map[string]any{"config": []any{"max_connections=200", "mysqlx_port=9104"}}),
		mysqlPortTaken},
	{"mysql admin port, quoted, on the exporter's port with monitoring on", "MySQL", monitored(map[string]any{"config": []any{" Loose-Admin-Port = '9104' # admin"}}),
		mysqlPortTaken},
	{"mysql extra port on the exporter's port with monitoring on", "MySQL", monitored(map[string]any{"config": []any{"extra_port=09104"}}),
		mysqlPortTaken},
	{"wordpress inline mysql X protocol on the exporter's port with monitoring on", "WordPress",
		map[string]any{"database": map[string]any{"mysql": monitored(map[string]any{"config": []any{"mysqlx-port=9104"}})}},
		"spec.database.mysql.config: Invalid value: " + mysqlPortTaken},
}, imageNameEdgeSpecs()...)

// imageRefused is the message of a spec.image that is no image reference.
const imageRefused = "spec.image must be an image reference such as"

// exporterImageRefused is the message of a spec.monitoring.image that is no image reference.
const exporterImageRefused = "spec.monitoring.image must be an image reference such as"

// monitoring is a spec that turns monitoring on with image.
func monitoring(image string) map[string]any {
	return map[string]any{"monitoring": map[string]any{"enabled": true, "image": image}}
}

// monitored is spec with monitoring turned on.
func monitored(spec map[string]any) map[string]any {
	spec["monitoring"] = map[string]any{"enabled": true}
	return spec
}

// portTaken is the message of a port field set to the port the exporter serves on.
func portTaken(field string, port int) string {
	return fmt.Sprintf("%s: Invalid value: %s must not be %d while spec.monitoring.enabled is true: the exporter serves its metrics on port %d of the same pod",
		field, field, port, port)
}

// mysqlPortTaken is the message of a MySQL config line that opens a listener on the exporter's port.
var mysqlPortTaken = fmt.Sprintf("spec.config must not set mysqlx_port, admin_port or extra_port to %d while spec.monitoring.enabled is true", appsv1alpha1.MySQLExporterPort)

// configRefused is the message of a MySQL config line that would break the pod's contract with
// the operator.
const (
	ackTimeoutRefused    = "spec.replication.ackTimeout applies only with durability Preferred"
	clusterConfigRefused = "spec.config must not set server_id, binary log, GTID, read_only, semi-synchronous replication or wsrep options while spec.members is above 1"
)

const configRefused = "spec.config must not set port, socket, bind-address, skip-networking, datadir, user or init-file, nor include other files"

// MaxNameLengths is the longest metadata.name of each kind.
var MaxNameLengths = map[string]int{
	"WebServer": appsv1alpha1.MaxWebServerNameLength,
	"Memcached": appsv1alpha1.MaxMemcachedNameLength,
	"PodSet":    appsv1alpha1.MaxPodSetNameLength,
	"MySQL":     appsv1alpha1.MaxMySQLNameLength,
	"WordPress": appsv1alpha1.MaxWordPressNameLength,
	// The backup's Jobs carry its name.
	"MySQLBackup":     appsv1alpha1.MaxMySQLBackupNameLength,
	"WordPressBackup": appsv1alpha1.MaxWordPressBackupNameLength,
}

// InvalidName is a name the API server must refuse for every kind, whatever the spec.
type InvalidName struct {
	Name   string
	Object func(limit int) string
}

// InvalidNames are the names no kind accepts: each names a child that cannot carry it.
var InvalidNames = []InvalidName{
	{"name one character too long", func(limit int) string { return strings.Repeat("a", limit+1) }},
	{"name with a dot", func(int) string { return "web.site" }},
	{"name starting with a digit", func(int) string { return "1web" }},
}

// InvalidObject is one object the API server must refuse: its kind, name and spec, and a part
// of the message it must give.
type InvalidObject struct {
	Test, Kind, Name string
	Spec             map[string]any
	Message          string
}

// InvalidObjects are the rows of InvalidSpecs, named bad-<row>, then every InvalidNames row for
// every kind, with a valid spec.
func InvalidObjects() []InvalidObject {
	objects := make([]InvalidObject, 0, len(InvalidSpecs)+len(InvalidNames)*len(MaxNameLengths))
	for i, tt := range InvalidSpecs {
		objects = append(objects, InvalidObject{tt.Name, tt.Kind, fmt.Sprintf("bad-%d", i), tt.Spec, tt.Message})
	}
	for _, kind := range []string{"WebServer", "Memcached", "PodSet", "MySQL", "WordPress", "MySQLBackup", "WordPressBackup"} {
		limit := MaxNameLengths[kind]
		message := fmt.Sprintf("metadata.name must be a DNS-1035 label of at most %d characters", limit)
		for _, tt := range InvalidNames {
			objects = append(objects, InvalidObject{kind + " " + tt.Name, kind, tt.Object(limit), ValidSpec(kind), message})
		}
	}
	return objects
}

// ValidSpec is the smallest spec of kind the API server accepts.
func ValidSpec(kind string) map[string]any {
	switch kind {
	case "PodSet":
		return podSetSpec(nil)
	case "MySQLBackup":
		return map[string]any{"mysqlName": "db"}
	case "WordPressBackup":
		return map[string]any{"wordpressName": "blog"}
	}
	return map[string]any{}
}

// s3Storage is a valid backup storage in a bucket, with fields of the bucket replaced by with's.
func s3Storage(with map[string]any) map[string]any {
	s3 := map[string]any{"endpoint": "http://s3.storage.svc:7070", "bucket": "backups", "credentialsSecretRef": map[string]any{"name": "s3-keys"}}
	for k, v := range with {
		s3[k] = v
	}
	return map[string]any{"s3": s3}
}

// backupSpec is a MySQL spec with backups on a schedule to storage.
func backupSpec(storage map[string]any) map[string]any {
	return map[string]any{"backup": map[string]any{"schedule": "0 2 * * *", "storage": storage}}
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
