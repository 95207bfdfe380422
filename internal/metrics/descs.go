package metrics

import "github.com/prometheus/client_golang/prometheus"

// Labels of every per-resource series: the resource's kind, namespace and name.
var resourceLabels = []string{"kind", "namespace", "name"}

func resourceDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(append([]string{}, resourceLabels...), extra...), nil)
}

var (
	conditionDesc = resourceDesc("appkeeper_resource_condition",
		"Status of a condition of an appkeeper resource: 1 on the series of its current status (true, false or unknown), 0 on the other two.",
		"condition", "status")
	conditionTransitionDesc = resourceDesc("appkeeper_resource_condition_last_transition_timestamp_seconds",
		"When a condition of an appkeeper resource last changed status, in Unix seconds.",
		"condition")
	replicasDesiredDesc = resourceDesc("appkeeper_resource_replicas_desired",
		"Replicas the resource's spec asks for (Memcached: its size; MySQL: its members).")
	replicasReadyDesc = resourceDesc("appkeeper_resource_replicas_ready",
		"Replicas of the resource that are ready to serve.")
	rollbacksDesc = resourceDesc("appkeeper_resource_rollbacks_total",
		"Failed rollouts of this resource that the operator rolled back to its last good revision (status.rollout.rollbacks).")

	backupLastSuccessDesc = resourceDesc("appkeeper_backup_last_success_timestamp_seconds",
		"When the newest successful backup of the resource completed, in Unix seconds; absent before its first successful backup.")
	backupLastDurationDesc = resourceDesc("appkeeper_backup_last_duration_seconds",
		"How long the newest successful backup of the resource took, from its start to its completion.")
	backupLastSizeDesc = resourceDesc("appkeeper_backup_last_size_bytes",
		"Size of the newest successful backup's artifacts as stored (compressed, and encrypted when asked), in bytes.")
	backupLastVerifiedDesc = resourceDesc("appkeeper_backup_last_verified_timestamp_seconds",
		"When the newest backup of the resource that passed its verification (a restore into a scratch server) completed, in Unix seconds.")
	backupVerificationFailedDesc = resourceDesc("appkeeper_backup_verification_failed",
		"1 when the newest verified backup of the resource failed its verification, else 0.")
	backupFailuresDesc = resourceDesc("appkeeper_backup_failures_total",
		"Backups of the resource that failed, each counted once from the status of its backup objects.")
	backupScheduleIntervalDesc = resourceDesc("appkeeper_backup_schedule_interval_seconds",
		"Longest time between two consecutive scheduled backups of the resource, from its cron schedule; absent without a schedule or while it is suspended.")

	volumeClaimDesc = resourceDesc("appkeeper_volume_claim_info",
		"1 for each PersistentVolumeClaim holding a resource's data (MySQL data, WordPress content), to join with kubelet_volume_stats_* on namespace and persistentvolumeclaim.",
		"persistentvolumeclaim")

	memberRoleDesc = resourceDesc("appkeeper_mysql_member_role",
		"1 for each member of a MySQL cluster, labelled with its role as the operator last read it: primary (takes the writes), replica (replicates), or unknown (could not be read, or does neither).",
		"member", "role")
	memberLagDesc = resourceDesc("appkeeper_mysql_member_lag_seconds",
		"How far a replica of a MySQL cluster applies behind its primary, in seconds, as the operator last read it; absent for a member that does not replicate or whose server does not know its lag.",
		"member")
	acknowledgingDesc = resourceDesc("appkeeper_mysql_acknowledging_replicas",
		"How many replicas of a MySQL cluster acknowledge its primary's commits, as the operator last read the primary; absent while no member takes writes.")
	commitsAloneDesc = resourceDesc("appkeeper_mysql_commits_alone",
		"1 while a MySQL cluster's primary returns commits without waiting for a replica (durability Preferred, none acknowledged within ackTimeout): a failover then can lose writes; 0 while it waits for one; absent while no member takes writes.")
	archiveLagDesc = resourceDesc("appkeeper_mysql_binlog_archive_lag_seconds",
		"How long a committed transaction of a MySQL with point-in-time recovery may have waited to be shipped to the archive: 0 while its shipper keeps up; absent until the operator has read the shipper.")
	archiveRecoverableDesc = resourceDesc("appkeeper_mysql_binlog_archive_recoverable",
		"1 while a MySQL's archive can restore to a point in time (a backup it follows without a gap, a shipper that ships), 0 while it cannot; absent until the operator has read the shipper.")
	primaryEpochDesc = resourceDesc("appkeeper_mysql_primary_epoch",
		"Members of a MySQL cluster made primary since the cluster began, the first included: each step up is a failover or a switchover.")
)

// descs are every series the collector emits.
var descs = []*prometheus.Desc{
	conditionDesc, conditionTransitionDesc, replicasDesiredDesc, replicasReadyDesc, rollbacksDesc,
	backupLastSuccessDesc, backupLastDurationDesc, backupLastSizeDesc, backupLastVerifiedDesc,
	backupVerificationFailedDesc, backupFailuresDesc, backupScheduleIntervalDesc, volumeClaimDesc,
	memberRoleDesc, memberLagDesc, acknowledgingDesc, commitsAloneDesc, primaryEpochDesc, archiveLagDesc, archiveRecoverableDesc,
}
