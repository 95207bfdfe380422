// Package mysqlbackup builds the Jobs of a MySQLBackup: the one that dumps the server into a
// storage, and the one that restores the dump into a scratch server to verify it; and the init
// container that loads a backup into a new MySQL.
package mysqlbackup

import (
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
)

// Paths inside the backup pods.
const (
	storageMountPath = "/backup"
	caMountPath      = "/etc/appkeeper/s3-ca"
	caFile           = "ca.crt"
	storageVolume    = "backup-storage"
	caVolume         = "s3-ca"
)

// StorageAccess is what a container needs to reach a backup's location: the flags naming it, the
// credentials and passphrase as secretKeyRefs, and the volumes to mount.
type StorageAccess struct {
	Args    []string
	Env     []*corev1ac.EnvVarApplyConfiguration
	Volumes []*corev1ac.VolumeApplyConfiguration
	Mounts  []*corev1ac.VolumeMountApplyConfiguration
}

// Access is how a container reaches loc.
func Access(loc appsv1alpha1.BackupLocation) StorageAccess {
	var a StorageAccess
	target := backup.Target{Key: loc.Key}
	fromSecret := func(name, secret, key string) *corev1ac.EnvVarApplyConfiguration {
		ref := corev1ac.SecretKeySelector().WithName(secret).WithKey(key)
		return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().WithSecretKeyRef(ref))
	}
	switch s := loc.Storage; {
	case s.S3 != nil:
		target.S3Endpoint, target.S3Bucket, target.S3Region, target.S3PathStyle = s.S3.Endpoint, s.S3.Bucket, s.S3.Region, s.S3.ForcePathStyle
		a.Env = append(a.Env,
			fromSecret(backup.EnvAccessKeyID, s.S3.CredentialsSecretRef.Name, appsv1alpha1.SecretKeyAccessKeyID),
			fromSecret(backup.EnvSecretAccessKey, s.S3.CredentialsSecretRef.Name, appsv1alpha1.SecretKeySecretAccessKey))
		if s.S3.CASecretRef != nil {
			source := corev1ac.SecretVolumeSource().WithSecretName(s.S3.CASecretRef.Name).
				WithItems(corev1ac.KeyToPath().WithKey(caFile).WithPath(caFile))
			a.Volumes = append(a.Volumes, corev1ac.Volume().WithName(caVolume).WithSecret(source))
			a.Mounts = append(a.Mounts, corev1ac.VolumeMount().WithName(caVolume).WithMountPath(caMountPath).WithReadOnly(true))
			target.S3CAFile = caMountPath + "/" + caFile
		}
	case s.Volume != nil:
		a.Volumes = append(a.Volumes, corev1ac.Volume().WithName(storageVolume).
			WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(s.Volume.ClaimName)))
		a.Mounts = append(a.Mounts, corev1ac.VolumeMount().WithName(storageVolume).WithMountPath(storageMountPath))
		target.Volume = storageMountPath
	}
	if loc.Encryption != nil {
		ref := loc.Encryption.KeySecretRef
		a.Env = append(a.Env, fromSecret(backup.EnvEncryptionKey, ref.Name, ref.Key))
	}
	a.Args = target.Args()
	return a
}

// StorageOf is the storage and encryption a backup asks for, or else those of m's spec.backup;
// a nil storage when neither names one.
func StorageOf(storage *appsv1alpha1.BackupStorage, encryption *appsv1alpha1.BackupEncryption, m *appsv1alpha1.MySQL) (*appsv1alpha1.BackupStorage, *appsv1alpha1.BackupEncryption) {
	if storage == nil && m != nil && m.Spec.Backup != nil {
		return &m.Spec.Backup.Storage, m.Spec.Backup.Encryption
	}
	return storage, encryption
}
