package mysql

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// AccountsSQL creates the backup account with password, or gives it that password and the
// privileges it needs when it exists, then does the same for the exporter's account and a
// cluster's replication account. mysqld runs it at every start, so the Secrets are the source of
// truth. The passwords are generated from characters that need no escaping.
func AccountsSQL(password []byte, exporter ExporterAccount, cluster ClusterAccount) string {
	account := fmt.Sprintf("'%s'@'%%'", backup.AccountUser)
	return cluster.sql() + fmt.Sprintf("CREATE USER IF NOT EXISTS %[1]s IDENTIFIED BY '%[2]s';\n"+
		"ALTER USER %[1]s IDENTIFIED BY '%[2]s';\n"+
		"GRANT %[3]s ON *.* TO %[1]s;\n", account, password, backup.AccountPrivileges) + exporter.sql()
}

// BackupAccountSecret is the Secret of the backup account: its password, which the backup Jobs
// read by secretKeyRef, and the SQL mysqld runs at start, which keeps the exporter's account too.
// It goes with the MySQL: a new MySQL of the same name sets its own password at its first start.
func BackupAccountSecret(m *appsv1alpha1.MySQL, password []byte, exporter ExporterAccount, cluster ClusterAccount) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(m.BackupAccountSecretName(), m.Namespace).
		WithLabels(parts.Labels(m.SelectorLabels(), appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(m, gvk)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{
			appsv1alpha1.SecretKeyUser:     []byte(backup.AccountUser),
			appsv1alpha1.SecretKeyPassword: password,
			AccountsFile:                   []byte(AccountsSQL(password, exporter, cluster)),
		})
}

// Restore is what a new MySQL's pod needs to load a backup on its first start: the init
// containers that fetch it (and write the archived transactions to replay after it), in order.
type Restore struct {
	Containers []*corev1ac.ContainerApplyConfiguration
	Volumes    []*corev1ac.VolumeApplyConfiguration
	// Mount is where the fetched dump is, for the server's entrypoint to load.
	Mount *corev1ac.VolumeMountApplyConfiguration
}

// accountsVolumeSource mounts the init-file's SQL, readable by the mysql group only.
func accountsVolumeSource(m *appsv1alpha1.MySQL) *corev1ac.VolumeApplyConfiguration {
	return corev1ac.Volume().WithName(accountsVolume).WithSecret(corev1ac.SecretVolumeSource().
		WithSecretName(m.BackupAccountSecretName()).
		WithItems(corev1ac.KeyToPath().WithKey(AccountsFile).WithPath(AccountsFile)).
		WithDefaultMode(0o440))
}

// InitdbDir is where the server image's entrypoint looks for SQL to load on its first start.
const InitdbDir = initdbDir
