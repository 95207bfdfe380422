package mysqlbackup

import (
	corev1 "k8s.io/api/core/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	mysqlresources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// Container names of the wp-content Jobs.
const (
	ArchiveContainer = "archive"
	ExtractContainer = "extract"
)

// WordPressUser is www-data in the WordPress image: it owns wp-content, so the Jobs read and
// write it as that user.
const WordPressUser = 33

const (
	contentVolume = "wp-content"
	contentPath   = "/wp-content"
)

var wordPressBackupGVK = appsv1alpha1.GroupVersion.WithKind("WordPressBackup")

// ContentJobLabels are the labels of a WordPressBackup's Job and its pod.
func ContentJobLabels(b *appsv1alpha1.WordPressBackup) map[string]string {
	return parts.Labels(map[string]string{
		appsv1alpha1.LabelName:     appsv1alpha1.WordPressBackupAppName,
		appsv1alpha1.LabelInstance: b.Name,
	}, appsv1alpha1.ManagedByValue)
}

// ArchiveJob archives wp of the WordPress wp into loc. It mounts the site's volume read-only
// beside the running site, on the same node, as a volume one node can mount requires.
func ArchiveJob(b *appsv1alpha1.WordPressBackup, wp *appsv1alpha1.WordPress, loc appsv1alpha1.BackupLocation, toolsImage string) *batchv1ac.JobApplyConfiguration {
	access := mysqlresources.Access(loc)
	args := append([]string{"/appkeeper", "backup", backup.CommandArchive, "--" + backup.FlagDir + "=" + contentPath}, access.Args...)
	pod := contentPod(wp, true).
		WithVolumes(access.Volumes...).
		WithContainers(container(ArchiveContainer, toolsImage).
			WithCommand(args...).
			WithEnv(access.Env...).
			WithVolumeMounts(append([]*corev1ac.VolumeMountApplyConfiguration{
				corev1ac.VolumeMount().WithName(contentVolume).WithMountPath(contentPath).WithReadOnly(true),
			}, access.Mounts...)...))
	if !sharedVolume(wp) {
		// Beside the site's pods: a volume only one node can mount is on theirs.
		pod.WithAffinity(corev1ac.Affinity().WithPodAffinity(corev1ac.PodAffinity().
			WithRequiredDuringSchedulingIgnoredDuringExecution(corev1ac.PodAffinityTerm().
				WithTopologyKey(corev1.LabelHostname).
				WithLabelSelector(metav1ac.LabelSelector().WithMatchLabels(wp.SelectorLabels())))))
	}
	return job(b, wordPressBackupGVK, ContentJobLabels(b), b.ContentJobName(), dumpBackoffLimit, pod)
}

// RestoreContentJob fills the empty wp-content volume of a new WordPress from the archive at loc,
// before the site's first pod starts.
func RestoreContentJob(wp *appsv1alpha1.WordPress, loc appsv1alpha1.BackupLocation, toolsImage string) *batchv1ac.JobApplyConfiguration {
	access := mysqlresources.Access(loc)
	args := append([]string{"/appkeeper", "backup", backup.CommandExtract, "--" + backup.FlagDir + "=" + contentPath,
		"--" + backup.FlagUnlessNonEmpty}, access.Args...)
	pod := contentPod(wp, false).
		WithVolumes(access.Volumes...).
		WithContainers(container(ExtractContainer, toolsImage).
			WithCommand(args...).
			WithEnv(access.Env...).
			WithVolumeMounts(append([]*corev1ac.VolumeMountApplyConfiguration{
				corev1ac.VolumeMount().WithName(contentVolume).WithMountPath(contentPath),
			}, access.Mounts...)...))
	return job(wp, appsv1alpha1.GroupVersion.WithKind("WordPress"), RestoreContentJobLabels(wp), wp.RestoreJobName(), dumpBackoffLimit, pod)
}

// RestoreContentJobLabels are the labels of a WordPress's restore Job and its pod. Their name label
// is not the site's, so the site never counts the Job's pod as one of its own.
func RestoreContentJobLabels(wp *appsv1alpha1.WordPress) map[string]string {
	return parts.Labels(map[string]string{
		appsv1alpha1.LabelName:     appsv1alpha1.WordPressAppName + "-restore",
		appsv1alpha1.LabelInstance: wp.Name,
	}, appsv1alpha1.ManagedByValue)
}

// contentPod runs as www-data with the site's volume, where the site's pods may run.
func contentPod(wp *appsv1alpha1.WordPress, readOnly bool) *corev1ac.PodSpecApplyConfiguration {
	pod := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithAutomountServiceAccountToken(false).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(WordPressUser).
			WithRunAsGroup(WordPressUser).
			WithFSGroup(WordPressUser).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithVolumes(corev1ac.Volume().WithName(contentVolume).
			WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().
				WithClaimName(wp.ContentClaimName()).WithReadOnly(readOnly)))
	return pod
}

func sharedVolume(wp *appsv1alpha1.WordPress) bool {
	for _, m := range wp.Spec.Storage.AccessModes {
		if m == corev1.ReadWriteMany {
			return true
		}
	}
	return false
}
