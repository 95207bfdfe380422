package mysql

import (
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
)

const caFile = "ca.crt"

// storagePaths name the volumes through which a pod reaches one storage, and where they are
// mounted: a pod that reaches two (a restore's source and its own archive) mounts each apart.
type storagePaths struct {
	volume, mountPath, caVolume, caMountPath string
}

var (
	backupStoragePaths  = storagePaths{volume: "backup-storage", mountPath: "/backup", caVolume: "s3-ca", caMountPath: "/etc/appkeeper/s3-ca"}
	archiveStoragePaths = storagePaths{volume: "archive-storage", mountPath: "/archive", caVolume: "archive-s3-ca", caMountPath: "/etc/appkeeper/archive-s3-ca"}
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
func Access(loc appsv1alpha1.BackupLocation) StorageAccess { return access(loc, backupStoragePaths) }

func access(loc appsv1alpha1.BackupLocation, p storagePaths) StorageAccess {
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
			a.Volumes = append(a.Volumes, corev1ac.Volume().WithName(p.caVolume).WithSecret(source))
			a.Mounts = append(a.Mounts, corev1ac.VolumeMount().WithName(p.caVolume).WithMountPath(p.caMountPath).WithReadOnly(true))
			target.S3CAFile = p.caMountPath + "/" + caFile
		}
	case s.Volume != nil:
		a.Volumes = append(a.Volumes, corev1ac.Volume().WithName(p.volume).
			WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(s.Volume.ClaimName)))
		a.Mounts = append(a.Mounts, corev1ac.VolumeMount().WithName(p.volume).WithMountPath(p.mountPath))
		target.Volume = p.mountPath
	}
	if loc.Encryption != nil {
		ref := loc.Encryption.KeySecretRef
		a.Env = append(a.Env, fromSecret(backup.EnvEncryptionKey, ref.Name, ref.Key))
	}
	a.Args = target.Args()
	return a
}
