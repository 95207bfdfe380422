package mysql

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// ShipperContainer ships the binary log of a MySQL whose backups keep it for point-in-time
// recovery; it serves its status on ShipperStatusPort, which the operator reads.
const (
	ShipperContainer  = "binlog-shipper"
	ShipperStatusPort = 9106
)

// binlogCnf turns on the binary log of a single server whose binary log is archived, as a
// cluster's members keep theirs: in row format, each transaction synced before it is
// acknowledged, so that what a client was told is committed is in the file the shipper reads.
func binlogCnf() string {
	return strings.Join([]string{
		"log_bin=binlog",
		"binlog_format=ROW",
		"sync_binlog=1",
		"innodb_flush_log_at_trx_commit=1",
		"loose-gtid_strict_mode=ON",
	}, "\n") + "\n"
}

// ArchiveLocation is where m's binary log archive is kept: its backups' storage and encryption,
// under the archive's root key.
func ArchiveLocation(m *appsv1alpha1.MySQL) appsv1alpha1.BackupLocation {
	policy := m.Spec.Backup
	return appsv1alpha1.BackupLocation{Storage: policy.Storage, Key: m.BinlogArchiveKey(policy.Storage), Encryption: policy.Encryption}
}

// withShipper adds the shipper beside the server, from toolsImage: it reads the binary log files
// on the data volume (never writing them) and the server's role as the backup account, and ships
// while its member is the primary.
func withShipper(pod *corev1ac.PodSpecApplyConfiguration, m *appsv1alpha1.MySQL, toolsImage string) {
	a := access(ArchiveLocation(m), archiveStoragePaths)
	args := append([]string{"/appkeeper", "backup", backup.CommandShip}, a.Args...)
	args = append(args, "--"+backup.FlagHost+"="+RootHost, "--"+backup.FlagPort+"="+strconv.Itoa(appsv1alpha1.MySQLPort),
		"--"+backup.FlagUser+"="+backup.AccountUser, "--"+backup.FlagStatusAddress+"=:"+strconv.Itoa(ShipperStatusPort))
	env := append([]*corev1ac.EnvVarApplyConfiguration{
		corev1ac.EnvVar().WithName(backup.EnvMySQLPassword).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(m.BackupAccountSecretName()).WithKey(appsv1alpha1.SecretKeyPassword))),
	}, a.Env...)
	pod.WithVolumes(a.Volumes...).WithContainers(parts.Container(ShipperContainer, toolsImage).
		WithCommand(args...).
		WithEnv(env...).
		WithPorts(corev1ac.ContainerPort().WithName("binlog-status").WithContainerPort(ShipperStatusPort).WithProtocol(corev1.ProtocolTCP)).
		WithVolumeMounts(append([]*corev1ac.VolumeMountApplyConfiguration{
			corev1ac.VolumeMount().WithName(DataVolume).WithMountPath(dataDir).WithReadOnly(true),
		}, a.Mounts...)...).
		WithSecurityContext(restricted()))
}
