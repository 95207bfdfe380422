package mysqlbackup

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backup"
	mysqlresources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// Container names of the backup pods; the operator reads the result of the one that reports.
const (
	InstallContainer = "install"
	DumpContainer    = "dump"
	FetchContainer   = "fetch"
	// ReplayContainer writes the archived transactions a restore to a point in time replays.
	ReplayContainer = "replay"
	ServerContainer = "server"
	VerifyContainer = "verify"
)

// Attempts bound the retries of a Job: a dump that failed on a passing fault (the server
// restarting, the storage briefly away) is tried again, a lasting one fails the backup soon.
const (
	dumpBackoffLimit   = 2
	verifyBackoffLimit = 1
)

const (
	toolsPath     = "/tools"
	toolsVolume   = "tools"
	initdbVolume  = "initdb"
	initdbPath    = mysqlresources.InitdbDir
	scratchVolume = "scratch-data"
	dataPath      = "/var/lib/mysql"
	restoreFile   = "restore.sql.gz"
	// replayFile sorts after restoreFile whatever the collation, so that the entrypoint loads it
	// after the dump.
	replayFile         = "zz-replay.sql"
	restoreToolsVolume = "restore-tools"
	startupPeriod      = 5
	startupMinutes     = 120
)

var gvk = appsv1alpha1.GroupVersion.WithKind("MySQLBackup")

// JobLabels are the labels of a backup's Jobs and their pods.
func JobLabels(b *appsv1alpha1.MySQLBackup) map[string]string {
	return parts.Labels(map[string]string{
		appsv1alpha1.LabelName:     appsv1alpha1.MySQLBackupAppName,
		appsv1alpha1.LabelInstance: b.Name,
	}, appsv1alpha1.ManagedByValue)
}

// maxSourceLagSeconds is how far behind its primary a replica may apply and still be dumped.
const maxSourceLagSeconds = 5

// SourceMember is the member of a MySQL cluster to dump: the replica in step with the primary
// that comes last by ordinal, the one a shrink removes first; empty, for the primary through the
// client Service, when no replica is in step or the MySQL is one server.
func SourceMember(m *appsv1alpha1.MySQL) string {
	if !m.Clustered() {
		return ""
	}
	source := ""
	for _, member := range m.Status.Members {
		if member.Role == appsv1alpha1.RoleReplica && member.Message == "" && member.LagSeconds != nil &&
			*member.LagSeconds <= maxSourceLagSeconds && member.Name > source {
			source = member.Name
		}
	}
	return source
}

// DumpJob dumps m with the server's own mysqldump, from serverImage, into loc, then deletes the
// keys in prune. The dump reads member when one is named, else the primary through the client
// Service, and connects as the backup account; every secret comes by secretKeyRef.
func DumpJob(b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL, member string, loc appsv1alpha1.BackupLocation, prune []string, toolsImage, serverImage string) *batchv1ac.JobApplyConfiguration {
	access := mysqlresources.Access(loc)
	args := append([]string{toolsPath + "/appkeeper", "backup", backup.CommandDump}, access.Args...)
	host := m.Host()
	if member != "" {
		host = m.MemberHost(member)
		args = append(args, "--"+backup.FlagCatchUpHost+"="+m.Host())
	}
	args = append(args,
		"--"+backup.FlagHost+"="+host,
		"--"+backup.FlagPort+"="+strconv.Itoa(appsv1alpha1.MySQLPort),
		"--"+backup.FlagUser+"="+backup.AccountUser)
	args = append(args, backup.PruneArgs(prune)...)
	if m.Spec.Backup.PointInTimeRecoveryEnabled() && m.Spec.Backup.KeepsBeside(b.Spec.Storage) {
		// The backup lies beside the archive, in the storage of spec.backup: a replay finds it.
		args = append(args, "--"+backup.FlagBinlogArchive+"="+mysqlresources.ArchiveLocation(m).Key)
	}
	env := append([]*corev1ac.EnvVarApplyConfiguration{
		secretEnv(backup.EnvMySQLPassword, m.BackupAccountSecretName(), appsv1alpha1.SecretKeyPassword),
	}, access.Env...)
	tools := corev1ac.VolumeMount().WithName(toolsVolume).WithMountPath(toolsPath)
	pod := podSpec(m).
		WithVolumes(append([]*corev1ac.VolumeApplyConfiguration{
			corev1ac.Volume().WithName(toolsVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		}, access.Volumes...)...).
		WithInitContainers(container(InstallContainer, toolsImage).
			WithCommand("/appkeeper", "backup", backup.CommandInstall, toolsPath+"/appkeeper").
			WithVolumeMounts(tools)).
		WithContainers(container(DumpContainer, serverImage).
			WithCommand(args...).
			WithEnv(env...).
			WithVolumeMounts(append([]*corev1ac.VolumeMountApplyConfiguration{tools}, access.Mounts...)...))
	return job(b, gvk, JobLabels(b), b.JobName(), dumpBackoffLimit, pod)
}

// VerifyJob restores the backup at loc into a scratch server of serverImage, started with an empty
// data folder beside the check, and compares every table with the backup's manifest. The scratch
// server's root password is m's, which the Job's pod alone can reach.
func VerifyJob(b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL, loc appsv1alpha1.BackupLocation, toolsImage, serverImage string) *batchv1ac.JobApplyConfiguration {
	access := mysqlresources.Access(loc)
	initdb := corev1ac.VolumeMount().WithName(initdbVolume).WithMountPath(initdbPath)
	rootPassword := secretEnv("MYSQL_ROOT_PASSWORD", m.SecretName(), appsv1alpha1.SecretKeyRootPassword)
	fetch := append([]string{"/appkeeper", "backup", backup.CommandFetch}, access.Args...)
	fetch = append(fetch, "--"+backup.FlagOut+"="+initdbPath+"/"+restoreFile)
	verify := append([]string{"/appkeeper", "backup", backup.CommandVerify}, access.Args...)
	verify = append(verify, "--"+backup.FlagHost+"="+mysqlresources.RootHost,
		"--"+backup.FlagPort+"="+strconv.Itoa(appsv1alpha1.MySQLPort), "--"+backup.FlagUser+"=root")
	readiness := corev1ac.Probe().
		WithExec(corev1ac.ExecAction().WithCommand(mysqlresources.ReadinessCommand...)).
		WithTimeoutSeconds(5).WithPeriodSeconds(startupPeriod).
		WithFailureThreshold(startupMinutes * 60 / startupPeriod)
	pod := podSpec(m).
		WithVolumes(append([]*corev1ac.VolumeApplyConfiguration{
			corev1ac.Volume().WithName(initdbVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
			corev1ac.Volume().WithName(scratchVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		}, access.Volumes...)...).
		WithInitContainers(
			container(FetchContainer, toolsImage).
				WithCommand(fetch...).
				WithEnv(access.Env...).
				WithVolumeMounts(append([]*corev1ac.VolumeMountApplyConfiguration{initdb}, access.Mounts...)...),
			// A sidecar: the check starts once the restore is loaded and the server answers, and the
			// server is stopped when the check ends.
			container(ServerContainer, serverImage).
				WithRestartPolicy(corev1.ContainerRestartPolicyAlways).
				WithEnv(rootPassword, corev1ac.EnvVar().WithName("MYSQL_ROOT_HOST").WithValue(mysqlresources.RootHost)).
				WithVolumeMounts(initdb, corev1ac.VolumeMount().WithName(scratchVolume).WithMountPath(dataPath)).
				WithStartupProbe(readiness)).
		WithContainers(container(VerifyContainer, toolsImage).
			WithCommand(verify...).
			WithEnv(append([]*corev1ac.EnvVarApplyConfiguration{
				secretEnv(backup.EnvMySQLPassword, m.SecretName(), appsv1alpha1.SecretKeyRootPassword),
			}, access.Env...)...).
			WithVolumeMounts(access.Mounts...))
	return job(b, gvk, JobLabels(b), b.VerifyJobName(), verifyBackoffLimit, pod)
}

// Restore loads the backup at loc into a new MySQL's pod: its init container writes the dump where
// the server image's entrypoint loads it on the first start, and does nothing on later starts,
// when the data folder is initialised. With a point in time, a second one, in serverImage (whose
// mariadb-binlog turns the archive into SQL), writes the archived transactions that follow the
// backup up to the target, loaded after the dump; a target outside the archive fails it before
// the server holds any data.
func Restore(loc appsv1alpha1.BackupLocation, target *appsv1alpha1.PointInTimeTarget, toolsImage, serverImage string) *mysqlresources.Restore {
	access := mysqlresources.Access(loc)
	initdb := corev1ac.VolumeMount().WithName(initdbVolume).WithMountPath(initdbPath)
	data := corev1ac.VolumeMount().WithName(mysqlresources.DataVolume).WithMountPath(dataPath).WithReadOnly(true)
	args := append([]string{"/appkeeper", "backup", backup.CommandFetch}, access.Args...)
	args = append(args, "--"+backup.FlagOut+"="+initdbPath+"/"+restoreFile, "--"+backup.FlagUnlessInit+"="+dataPath)
	r := &mysqlresources.Restore{
		Containers: []*corev1ac.ContainerApplyConfiguration{container(FetchContainer, toolsImage).
			WithCommand(args...).
			WithEnv(access.Env...).
			WithVolumeMounts(append([]*corev1ac.VolumeMountApplyConfiguration{initdb, data}, access.Mounts...)...)},
		Volumes: append([]*corev1ac.VolumeApplyConfiguration{
			corev1ac.Volume().WithName(initdbVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
		}, access.Volumes...),
		Mount: initdb,
	}
	if target == nil {
		return r
	}
	tools := corev1ac.VolumeMount().WithName(restoreToolsVolume).WithMountPath(toolsPath)
	replay := append([]string{toolsPath + "/appkeeper", "backup", backup.CommandReplay}, access.Args...)
	replay = append(replay, "--"+backup.FlagOut+"="+initdbPath+"/"+replayFile, "--"+backup.FlagUnlessInit+"="+dataPath)
	if target.Time != nil {
		replay = append(replay, "--"+backup.FlagUntilTime+"="+target.Time.UTC().Format(time.RFC3339))
	} else {
		replay = append(replay, "--"+backup.FlagUntilGTID+"="+target.GTID)
	}
	r.Volumes = append(r.Volumes, corev1ac.Volume().WithName(restoreToolsVolume).WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
	r.Containers = append(r.Containers,
		container(InstallContainer, toolsImage).
			WithCommand("/appkeeper", "backup", backup.CommandInstall, toolsPath+"/appkeeper").
			WithVolumeMounts(tools),
		container(ReplayContainer, serverImage).
			WithCommand(replay...).
			WithEnv(access.Env...).
			WithVolumeMounts(append([]*corev1ac.VolumeMountApplyConfiguration{initdb, data, tools}, access.Mounts...)...))
	return r
}

func job(owner metav1.Object, kind schema.GroupVersionKind, labels map[string]string, name string, backoffLimit int32, pod *corev1ac.PodSpecApplyConfiguration) *batchv1ac.JobApplyConfiguration {
	return batchv1ac.Job(name, owner.GetNamespace()).
		WithLabels(labels).
		WithOwnerReferences(parts.ControllerReference(owner, kind)).
		WithSpec(batchv1ac.JobSpec().
			WithBackoffLimit(backoffLimit).
			WithPodReplacementPolicy(batchv1.Failed).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(pod)))
}

// podSpec runs as the MySQL image's user, with no API token, where m's pod may run.
func podSpec(m *appsv1alpha1.MySQL) *corev1ac.PodSpecApplyConfiguration {
	pod := corev1ac.PodSpec().
		WithRestartPolicy(corev1.RestartPolicyNever).
		WithAutomountServiceAccountToken(false).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).
			WithRunAsUser(appsv1alpha1.MySQLUser).
			WithRunAsGroup(appsv1alpha1.MySQLUser).
			WithFSGroup(appsv1alpha1.MySQLUser).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault)))
	parts.Schedule(pod, m.Spec.NodeSelector, m.Spec.Tolerations, m.Spec.Affinity)
	return pod
}

func container(name, image string) *corev1ac.ContainerApplyConfiguration {
	// The subcommands write their result as the termination message; a crash leaves its log.
	return parts.Container(name, image).
		WithSecurityContext(parts.ApplyConfiguration[corev1ac.SecurityContextApplyConfiguration](parts.RestrictedSecurityContext()))
}

func secretEnv(name, secret, key string) *corev1ac.EnvVarApplyConfiguration {
	return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
		WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(secret).WithKey(key)))
}
