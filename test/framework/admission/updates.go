package admission

import (
	"strings"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// Update is a spec of kind the API server accepts at creation, then a JSON merge patch of that
// spec (nil removes a field) and, when the update must be refused, a part of the message.
type Update struct {
	Name    string
	Kind    string
	Spec    map[string]any
	Patch   map[string]any
	Message string
}

const (
	databaseImmutable         = "spec.database is immutable"
	userImmutable             = "spec.user is immutable"
	credentialsImmutable      = "spec.credentialsSecretRef is immutable"
	storageImmutable          = "spec.storage is immutable"
	membersToOne              = "spec.members cannot go back to 1"
	mysqlSwitchRefused        = "spec.database cannot switch between mysqlRef and mysql after creation"
	wordpressRestoreImmutable = "spec.restore is immutable: the site is restored once, before it first starts"
)

// inlineMySQL is a WordPress spec, or patch, with the given fields of its own MySQL.
func inlineMySQL(fields map[string]any) map[string]any {
	return map[string]any{"database": map[string]any{"mysql": fields}}
}

// InvalidUpdates are updates the API server must refuse: they change what takes effect only when
// a server or volume is first made.
var InvalidUpdates = []Update{
	{"mysql database added", "MySQL", map[string]any{}, map[string]any{"database": "shop"}, databaseImmutable},
	{"mysql database changed", "MySQL", map[string]any{"database": "shop"}, map[string]any{"database": "other"}, databaseImmutable},
	{"mysql database removed", "MySQL", map[string]any{"database": "shop"}, map[string]any{"database": nil}, databaseImmutable},
	{"mysql user added", "MySQL", map[string]any{}, map[string]any{"user": "shop"}, userImmutable},
	{"mysql user changed", "MySQL", map[string]any{"user": "shop"}, map[string]any{"user": "other"}, userImmutable},
	{"mysql user removed", "MySQL", map[string]any{"user": "shop"}, map[string]any{"user": nil}, userImmutable},
	{"mysql credentialsSecretRef added", "MySQL", map[string]any{},
		map[string]any{"credentialsSecretRef": map[string]any{"name": "creds"}}, credentialsImmutable},
	{"mysql credentialsSecretRef changed", "MySQL", map[string]any{"credentialsSecretRef": map[string]any{"name": "creds"}},
		map[string]any{"credentialsSecretRef": map[string]any{"name": "other"}}, credentialsImmutable},
	{"mysql credentialsSecretRef removed", "MySQL", map[string]any{"credentialsSecretRef": map[string]any{"name": "creds"}},
		map[string]any{"credentialsSecretRef": nil}, credentialsImmutable},
	{"mysql storage grown", "MySQL", map[string]any{}, map[string]any{"storage": map[string]any{"size": "20Gi"}}, storageImmutable},
	{"mysql storage class added", "MySQL", map[string]any{}, map[string]any{"storage": map[string]any{"storageClassName": "fast"}}, storageImmutable},
	{"mysql storage removed, back to the default size", "MySQL", map[string]any{"storage": map[string]any{"size": "20Gi"}},
		map[string]any{"storage": nil}, storageImmutable},
	{"mysql cluster shrunk to one server", "MySQL", map[string]any{"members": 3}, map[string]any{"members": 1}, membersToOne},
	{"wordpress inline mysql cluster shrunk to one server", "WordPress", inlineMySQL(map[string]any{"members": 3}), inlineMySQL(map[string]any{"members": 1}),
		"spec.database.mysql.members cannot go back to 1"},
	{"mysql config line setting port added", "MySQL", map[string]any{}, map[string]any{"config": []any{"port=3307"}}, configRefused},
	{"wordpress storage grown", "WordPress", map[string]any{}, map[string]any{"storage": map[string]any{"size": "5Gi"}}, storageImmutable},
	{"wordpress storage class added", "WordPress", map[string]any{}, map[string]any{"storage": map[string]any{"storageClassName": "fast"}}, storageImmutable},
	{"wordpress storage access modes changed", "WordPress", map[string]any{},
		map[string]any{"storage": map[string]any{"accessModes": []any{"ReadWriteMany"}}}, storageImmutable},
	{"wordpress switched from its own MySQL to mysqlRef", "WordPress", map[string]any{},
		map[string]any{"database": map[string]any{"mysql": nil, "mysqlRef": map[string]any{"name": "db"}}}, mysqlSwitchRefused},
	{"wordpress switched from mysqlRef to its own MySQL", "WordPress", map[string]any{"database": map[string]any{"mysqlRef": map[string]any{"name": "db"}}},
		map[string]any{"database": map[string]any{"mysqlRef": nil, "mysql": map[string]any{}}}, mysqlSwitchRefused},
	{"wordpress inline mysql database changed", "WordPress", map[string]any{}, inlineMySQL(map[string]any{"database": "blog"}),
		"spec.database.mysql.database is immutable"},
	{"wordpress inline mysql user removed", "WordPress", inlineMySQL(map[string]any{"user": "blog"}), inlineMySQL(map[string]any{"user": nil}),
		"spec.database.mysql.user is immutable"},
	{"wordpress inline mysql credentialsSecretRef added", "WordPress", map[string]any{},
		inlineMySQL(map[string]any{"credentialsSecretRef": map[string]any{"name": "creds"}}), "spec.database.mysql.credentialsSecretRef is immutable"},
	{"wordpress inline mysql storage grown", "WordPress", map[string]any{}, inlineMySQL(map[string]any{"storage": map[string]any{"size": "50Gi"}}),
		"spec.database.mysql.storage is immutable"},
	{"mysql restore added", "MySQL", map[string]any{}, map[string]any{"restore": map[string]any{"backupName": "b"}}, "spec.restore is immutable"},
	{"mysql restore removed", "MySQL", map[string]any{"restore": map[string]any{"backupName": "b"}}, map[string]any{"restore": nil}, "spec.restore is immutable"},
	{"wordpressbackup spec changed", "WordPressBackup", map[string]any{"wordpressName": "blog"}, map[string]any{"wordpressName": "other"}, "spec is immutable"},
	{"wordpress restore added", "WordPress", map[string]any{}, map[string]any{"restore": map[string]any{"backupName": "monday"}}, wordpressRestoreImmutable},
	{"wordpress restore changed", "WordPress", map[string]any{"restore": map[string]any{"backupName": "monday"}},
		map[string]any{"restore": map[string]any{"backupName": "tuesday"}}, wordpressRestoreImmutable},
	{"wordpress restore removed", "WordPress", map[string]any{"restore": map[string]any{"backupName": "monday"}}, map[string]any{"restore": nil},
		wordpressRestoreImmutable},
	{"mysqlbackup spec changed", "MySQLBackup", map[string]any{"mysqlName": "db"}, map[string]any{"mysqlName": "other"}, "spec is immutable"},
	{"webserver monitoring turned on while nginx listens on the exporter's port", "WebServer", map[string]any{"port": appsv1alpha1.WebServerExporterPort},
		map[string]any{"monitoring": map[string]any{"enabled": true}}, portTaken("spec.port", appsv1alpha1.WebServerExporterPort)},
	{"memcached moved to the exporter's port with monitoring on", "Memcached", monitored(map[string]any{}),
		map[string]any{"port": appsv1alpha1.MemcachedExporterPort}, portTaken("spec.port", appsv1alpha1.MemcachedExporterPort)},
	{"mysql monitoring turned on with the X protocol on the exporter's port", "MySQL", map[string]any{"config": []any{"mysqlx_port=9104"}},
		map[string]any{"monitoring": map[string]any{"enabled": true}}, mysqlPortTaken},
	{"podset template changed to pods that exit", "PodSet", podSetSpec(nil),
		map[string]any{"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never"}}}, "spec.template.spec.restartPolicy must be Always"},
}

// ValidUpdates are updates the API server must accept, next to the refused ones.
var ValidUpdates = append([]Update{
	{"webserver image and replicas", "WebServer", map[string]any{}, map[string]any{"image": "nginx:1.27", "replicas": 3}, ""},
	{"webserver image from a registry on an IPv6 address, by digest", "WebServer", map[string]any{},
		map[string]any{"image": "[fd00::1]:5000/team/nginx@sha256:" + strings.Repeat("0a", 32)}, ""},
	{"mysql cluster durability and ack timeout, with members set to the same", "MySQL", map[string]any{"members": 3},
		map[string]any{"members": 3, "replication": map[string]any{"durability": "Preferred", "ackTimeout": "250ms", "failoverDelay": "30s"}, "config": []any{"max_connections=300"}}, ""},
	{"mysql members 1 written out on a MySQL created without it", "MySQL", map[string]any{}, map[string]any{"members": 1}, ""},
	{"mysql members grown from one server to three", "MySQL", map[string]any{}, map[string]any{"members": 3}, ""},
	{"mysql members grown from three to five", "MySQL", map[string]any{"members": 3}, map[string]any{"members": 5}, ""},
	{"mysql members shrunk from five to two", "MySQL", map[string]any{"members": 5}, map[string]any{"members": 2}, ""},
	{"wordpress inline mysql members grown", "WordPress", map[string]any{}, inlineMySQL(map[string]any{"members": 3}), ""},
	{"memcached size, image and memory", "Memcached", map[string]any{},
		map[string]any{"size": 3, "image": "memcached:1.6.39-alpine", "memoryMB": 128}, ""},
	{"podset image, with restartPolicy Always", "PodSet", podSetSpec(nil), map[string]any{"template": map[string]any{"spec": map[string]any{
		"restartPolicy": "Always", "containers": []any{map[string]any{"name": "main", "image": "busybox:1.37"}},
	}}}, ""},
	{"mysql image, config and deletionPolicy, with fixed fields kept", "MySQL",
		map[string]any{"database": "shop", "user": "shop", "credentialsSecretRef": map[string]any{"name": "creds"}, "storage": map[string]any{"size": "20Gi"}},
		map[string]any{"image": "mysql:8.4.7", "deletionPolicy": "Delete", "config": []any{
			"max_connections=200", "innodb_buffer_pool_size=256M", "character-set-server=utf8mb4", "userstat=1",
			"port_open_timeout=10", "skip-log-bin", "  log_error_verbosity = 2", "# a comment",
		}}, ""},
	{"mysql image from a registry with a port, by tag and digest", "MySQL", map[string]any{},
		map[string]any{"image": "registry.local:5000/db/mysql:8.4.6-oracle@sha256:" + strings.Repeat("0a", 32)}, ""},
	{"mysql image of another server", "MySQL", map[string]any{}, map[string]any{"image": "mariadb:11.4"}, ""},
	{"mysql backups added, changed and removed", "MySQL", map[string]any{},
		map[string]any{"backup": map[string]any{"schedule": "0 2 * * *", "timeZone": "Europe/Paris", "verify": true,
			"storage":   map[string]any{"volume": map[string]any{"claimName": "backups", "path": "db/"}},
			"retention": map[string]any{"keepLast": 7, "maxAge": "720h"}}}, ""},
	{"wordpress image, replicas and the MySQL it refers to", "WordPress", map[string]any{"database": map[string]any{"mysqlRef": map[string]any{"name": "db"}}},
		map[string]any{"image": "wordpress:6.8.4-php8.3-apache", "replicas": 0, "database": map[string]any{"mysqlRef": map[string]any{"name": "other"}}}, ""},
	{"wordpress inline mysql image and config, and its default database and user named", "WordPress", map[string]any{},
		inlineMySQL(map[string]any{"image": "mysql:8.4.7", "config": []any{"max_connections=300"}, "database": "wordpress", "user": "wordpress"}), ""},
	{"webserver on the exporter's port without monitoring, then on the stub_status port with monitoring", "WebServer",
		map[string]any{"port": appsv1alpha1.WebServerExporterPort}, monitored(map[string]any{"port": 8079}), ""},
	{"memcached on the exporter's port without monitoring, then back on its own with monitoring", "Memcached",
		map[string]any{"port": appsv1alpha1.MemcachedExporterPort}, monitored(map[string]any{"port": appsv1alpha1.DefaultMemcachedPort}), ""},
	{"mysql X protocol on the exporter's port without monitoring, then on another port with monitoring", "MySQL",
		map[string]any{"config": []any{"mysqlx_port=9104", "admin_port=9104"}}, monitored(map[string]any{"config": []any{"mysqlx_port=19104", "admin_port=33062", "port_open_timeout=9104"}}), ""},
	{"wordpress inline mysql X protocol on the exporter's port without monitoring", "WordPress",
		inlineMySQL(map[string]any{"config": []any{"mysqlx_port=9104"}}), inlineMySQL(map[string]any{"image": "mysql:8.4.7"}), ""},
	{"wordpress restored from a restore point: image and replicas, with the restore kept", "WordPress",
		map[string]any{"restore": map[string]any{"backupName": "monday"}}, map[string]any{"image": "wordpress:6.8.4-php8.3-apache", "replicas": 0}, ""},
}, imageNameEdgeUpdates()...)
