package mysql

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/backupjob"
	"github.com/appkeeper/appkeeper/internal/binlog"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	backupresources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
)

// reconcileBackupAccount keeps the Secret of the account backups connect as, whose init-file keeps
// the exporter's account too, as runsExporter says. Its password is made once; mysqld sets it on
// the account at every start, so even a lost Secret costs no data, only a restart before the next
// backup. The init-file keeps a cluster's replication account too, which it returns.
func (r *Reconciler) reconcileBackupAccount(ctx context.Context, m *appsv1alpha1.MySQL, runsExporter bool) (resources.ClusterAccount, error) {
	var exporter resources.ExporterAccount
	var cluster resources.ClusterAccount
	if err := pass.Concurrently(
		func() (err error) { exporter, err = r.reconcileExporterAccount(ctx, m, runsExporter); return err },
		func() (err error) { cluster, err = r.reconcileClusterAccount(ctx, m); return err },
	); err != nil {
		return cluster, err
	}
	name := m.BackupAccountSecretName()
	_, _, err := apply.GeneratedSecret(ctx, r.Client, m, name,
		generatePassword,
		func(data map[string][]byte) *corev1ac.SecretApplyConfiguration {
			return resources.BackupAccountSecret(m, data[appsv1alpha1.SecretKeyPassword], exporter, cluster)
		})
	if err != nil {
		return cluster, fmt.Errorf("backup account of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	return cluster, nil
}

// restoreSource is the backup a new MySQL loads, while it has not yet served from it: nil when
// there is none or the restore is over. wait explains why the server cannot be created yet.
func (r *Reconciler) restoreSource(ctx context.Context, m *appsv1alpha1.MySQL, sts *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim, pods []corev1.Pod) (restore *resources.Restore, wait string, err error) {
	spec := m.Spec.Restore
	if spec == nil || (m.Status.Restore != nil && m.Status.Restore.CompletionTime != nil) {
		return nil, "", nil
	}
	if sts != nil && sts.Status.ReadyReplicas > 0 && hasRestoreContainer(sts) {
		// The server has served once from the loaded data: the restore is over, and the pod
		// no longer needs the storage.
		source := restoreSourceName(spec, "")
		if m.Status.Restore != nil && m.Status.Restore.Source != "" {
			source = m.Status.Restore.Source
		}
		m.Status.Restore = &appsv1alpha1.MySQLRestoreStatus{Source: source, CompletionTime: ptr.To(metav1.Now())}
		event.Restored.Emit(r.Recorder, m, nil, "the server serves the data restored from %s", source)
		return nil, "", nil
	}
	if failure := restoreFailure(pods); failure != "" {
		return nil, failure, nil
	}
	if sts == nil && claim != nil {
		return nil, fmt.Sprintf("spec.restore: the data volume claim %s holds the data of an earlier MySQL of this name, which a restore would not replace; "+
			"delete this MySQL and the claim, then create the MySQL again", claim.Name), nil
	}
	if r.BackupImage == "" {
		return nil, "the operator was started without --backup-image: it has no image to fetch the backup with", nil
	}
	loc, base := spec.Location, spec.BackupName
	if spec.MySQLName != "" {
		if base, wait, err = r.newestBase(ctx, m); base == "" {
			return nil, wait, err
		}
	}
	if base != "" {
		if loc, wait, err = r.backupLocation(ctx, m, base); loc == nil {
			return nil, wait, err
		}
	}
	m.Status.Restore = &appsv1alpha1.MySQLRestoreStatus{Source: restoreSourceName(spec, base)}
	return backupresources.Restore(*loc, spec.PointInTime, r.BackupImage, m.Spec.Image), "", nil
}

// backupLocation is where the MySQLBackup name keeps its artifact, once it succeeded and can
// start the restore m asks for; else wait says why not.
func (r *Reconciler) backupLocation(ctx context.Context, m *appsv1alpha1.MySQL, name string) (*appsv1alpha1.BackupLocation, string, error) {
	b := &appsv1alpha1.MySQLBackup{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, b)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("spec.restore.backupName: MySQLBackup %s does not exist", name), nil
	case err != nil:
		return nil, "", fmt.Errorf("restore source of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	case b.Status.Phase == appsv1alpha1.BackupFailed:
		return nil, fmt.Sprintf("spec.restore.backupName: MySQLBackup %s failed: there is nothing to restore", name), nil
	case b.Status.Phase != appsv1alpha1.BackupSucceeded || b.Status.Location == nil:
		return nil, restoreWaitingPrefix + fmt.Sprintf("MySQLBackup %s to succeed", name), nil
	}
	if refusal := pointInTimeRefusal(m.Spec.Restore.PointInTime, b, time.Now()); refusal != "" {
		return nil, refusal, nil
	}
	return b.Status.Location, "", nil
}

// newestBase names the newest backup of spec.restore.mysqlName that a replay to the target can
// start from. The one a pass chose stays chosen: a later pass finds it in status.restore.
func (r *Reconciler) newestBase(ctx context.Context, m *appsv1alpha1.MySQL) (string, string, error) {
	if chosen, ok := strings.CutPrefix(statusRestoreSource(m), "MySQLBackup "); ok {
		return chosen, "", nil
	}
	spec := m.Spec.Restore
	list := &appsv1alpha1.MySQLBackupList{}
	if err := r.Client.List(ctx, list, client.InNamespace(m.Namespace), client.MatchingFields{backupjob.MySQLNameIndex: spec.MySQLName}); err != nil {
		return "", "", fmt.Errorf("backups of MySQL %s/%s: %w", m.Namespace, spec.MySQLName, err)
	}
	var policy *appsv1alpha1.MySQLBackupPolicy
	source := &appsv1alpha1.MySQL{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: spec.MySQLName}, source); err == nil {
		policy = source.Spec.Backup
	} else if !apierrors.IsNotFound(err) {
		return "", "", fmt.Errorf("MySQL %s/%s: %w", m.Namespace, spec.MySQLName, err)
	}
	if b := backupresources.NewestBaseBefore(list.Items, spec.MySQLName, policy, spec.PointInTime); b != nil {
		return b.Name, "", nil
	}
	return "", fmt.Sprintf("spec.restore.mysqlName: no backup of MySQL %s completed before the target with its binary log archived, "+
		"in the storage of its spec.backup: restore to a later point, or name a backup", spec.MySQLName), nil
}

func statusRestoreSource(m *appsv1alpha1.MySQL) string {
	if m.Status.Restore == nil {
		return ""
	}
	return m.Status.Restore.Source
}

// restoreWaitingPrefix starts the message of a restore that waits for its backup to complete,
// which is progress; every other reason to wait needs a person.
const restoreWaitingPrefix = "waiting for "

// restoreSourceName names what the restore reads: the backup base (the one named, or the one
// chosen for spec.restore.mysqlName), or the location.
func restoreSourceName(spec *appsv1alpha1.MySQLRestore, base string) string {
	if base != "" {
		return "MySQLBackup " + base
	}
	if spec.BackupName != "" {
		return "MySQLBackup " + spec.BackupName
	}
	return spec.Location.Storage.Describe() + "/" + spec.Location.Key
}

// restoreFailure says why the fetch or the replay of a restore failed, as the container's result
// tells: the kubelet retries it, but a backup that does not open or a target outside the
// archive's window fails again, and the server never starts on part of the data. Only a new
// MySQL with another spec.restore can succeed.
func restoreFailure(pods []corev1.Pod) string {
	for i := range pods {
		for _, container := range []string{backupresources.FetchContainer, backupresources.ReplayContainer} {
			if failure := backupjob.ContainerFailure(&pods[i], container); failure != "" {
				return fmt.Sprintf("spec.restore: the %s of pod %s failed: %s. The server has started on none of the data; "+
					"the kubelet tries again, but when that cannot change (a target outside the archive, a backup that does not open), "+
					"delete this MySQL and its data volume claim and create it with a restore that can succeed", container, pods[i].Name, failure)
			}
		}
	}
	return ""
}

func hasRestoreContainer(sts *appsv1.StatefulSet) bool {
	for _, c := range sts.Spec.Template.Spec.InitContainers {
		if c.Name == backupresources.FetchContainer {
			return true
		}
	}
	return false
}

// pointInTimeRefusal says why a restore to target from the backup b can never succeed, before
// anything is created: a time before the backup completed or still to come, a GTID the backup
// already holds, a backup taken without the binary log. A target past what the archive holds
// now is left to the replay, which the kubelet retries until the archive reaches it.
func pointInTimeRefusal(target *appsv1alpha1.PointInTimeTarget, b *appsv1alpha1.MySQLBackup, now time.Time) string {
	if target == nil {
		return ""
	}
	prefix := "spec.restore.pointInTime: "
	switch {
	case b.Status.BinlogPosition == "":
		return prefix + fmt.Sprintf("MySQLBackup %s was taken while its server kept no binary log: no archived transaction can follow it", b.Name)
	case target.Time != nil && b.Status.CompletionTime != nil && target.Time.Before(b.Status.CompletionTime):
		return prefix + fmt.Sprintf("the target %s is before MySQLBackup %s completed (%s): restore from an older backup, or to a later time",
			target.Time.UTC().Format(time.RFC3339), b.Name, b.Status.CompletionTime.UTC().Format(time.RFC3339))
	case target.Time != nil && target.Time.After(now):
		return prefix + fmt.Sprintf("the target %s has not come yet", target.Time.UTC().Format(time.RFC3339))
	case target.GTID != "":
		g, err := binlog.ParseGTID(target.GTID)
		position, perr := binlog.ParsePosition(b.Status.GTIDPosition)
		if err == nil && perr == nil && g.Seq < binlog.SeqIn(position, g.Domain) {
			return prefix + fmt.Sprintf("MySQLBackup %s already holds the transactions up to %s, after %s: restore from an older backup",
				b.Name, b.Status.GTIDPosition, target.GTID)
		}
	}
	return ""
}
