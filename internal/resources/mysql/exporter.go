package mysql

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

const (
	// ExporterUser is the account mysqld_exporter connects as.
	ExporterUser = "appkeeper_exporter"
	// ExporterHost is the only host the account connects from: the exporter shares the pod's
	// loopback with mysqld, and no other pod may try its password.
	ExporterHost = "127.0.0.1"
	// ExporterPrivileges are what mysqld_exporter's default collectors read and no more: the
	// process list, the replication state, and the server's status and schema tables. MariaDB
	// from 10.5.9 asks SLAVE MONITOR, not REPLICATION CLIENT, for the replication state; the
	// versioned comment gives it there, and MySQL reads it as a comment.
	ExporterPrivileges = "PROCESS, REPLICATION CLIENT, SELECT /*M!100509 , SLAVE MONITOR */"
	// ExporterMaxConnections bounds what the account can take from max_connections.
	ExporterMaxConnections = 3
	// ExporterConfigFile is the key of the exporter account Secret that holds the option file
	// the exporter reads.
	ExporterConfigFile = ".my.cnf"

	exporterConfigDir    = "/etc/mysqld-exporter"
	exporterConfigVolume = "exporter-account"
)

// ExporterAccount is the exporter's account as the init-file keeps it: Password is nil while the
// account has never been made, and Enabled says whether the server's pod runs the exporter.
type ExporterAccount struct {
	Password []byte
	Enabled  bool
}

// sql creates the account, or gives it its password, limits and privileges when it exists; with
// monitoring off it drops an account made before, so that no unused login stays open.
func (a ExporterAccount) sql() string {
	if a.Password == nil {
		return ""
	}
	account := fmt.Sprintf("'%s'@'%s'", ExporterUser, ExporterHost)
	if !a.Enabled {
		return fmt.Sprintf("DROP USER IF EXISTS %s;\n", account)
	}
	return fmt.Sprintf("CREATE USER IF NOT EXISTS %[1]s IDENTIFIED BY '%[2]s' WITH MAX_USER_CONNECTIONS %[3]d;\n"+
		"ALTER USER %[1]s IDENTIFIED BY '%[2]s' WITH MAX_USER_CONNECTIONS %[3]d;\n"+
		"GRANT %[4]s ON *.* TO %[1]s;\n", account, a.Password, ExporterMaxConnections, ExporterPrivileges)
}

// ExporterConfig is the option file mysqld_exporter reads the account from.
func ExporterConfig(password []byte) string {
	return fmt.Sprintf("[client]\nuser=%s\npassword=%s\nhost=%s\nport=%d\n",
		ExporterUser, password, ExporterHost, appsv1alpha1.MySQLPort)
}

// ExporterAccountSecret is the Secret of the exporter account: its password and the option file
// mounted into the exporter container alone.
func ExporterAccountSecret(m *appsv1alpha1.MySQL, password []byte) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(m.ExporterAccountSecretName(), m.Namespace).
		WithLabels(parts.Labels(m.SelectorLabels(), appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(m, gvk)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{
			appsv1alpha1.SecretKeyUser:     []byte(ExporterUser),
			appsv1alpha1.SecretKeyPassword: password,
			ExporterConfigFile:             []byte(ExporterConfig(password)),
		})
}

// ExporterArgs are mysqld_exporter's flags, in the --flag=value form every release accepts.
func ExporterArgs() []string {
	return []string{"--config.my-cnf=" + exporterConfigDir + "/" + ExporterConfigFile}
}

// exporter is the exporter container of m and the volume of its option file, or nils when
// monitoring is off.
func exporter(m *appsv1alpha1.MySQL) (*corev1ac.ContainerApplyConfiguration, *corev1ac.VolumeApplyConfiguration) {
	c := parts.ExporterContainer(m.Spec.Monitoring, parts.Exporter{
		DefaultImage: appsv1alpha1.DefaultMySQLExporterImage,
		Port:         appsv1alpha1.MySQLExporterPort,
		Args:         ExporterArgs(),
		Mounts: []*corev1ac.VolumeMountApplyConfiguration{corev1ac.VolumeMount().
			WithName(exporterConfigVolume).WithMountPath(exporterConfigDir).WithReadOnly(true)},
	})
	if c == nil {
		return nil, nil
	}
	// Readable by the mysql group, which the pod's fsGroup gives the exporter too.
	volume := corev1ac.Volume().WithName(exporterConfigVolume).WithSecret(corev1ac.SecretVolumeSource().
		WithSecretName(m.ExporterAccountSecretName()).
		WithItems(corev1ac.KeyToPath().WithKey(ExporterConfigFile).WithPath(ExporterConfigFile)).
		WithDefaultMode(0o440))
	return c, volume
}
