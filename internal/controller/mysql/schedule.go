package mysql

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/robfig/cron/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/backupjob"
	"github.com/appkeeper/appkeeper/internal/event"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// maxMissedCount bounds the walk over missed schedule times, as the CronJob controller does: a
// schedule every minute missed for a long outage is counted only this far.
const maxMissedCount = 1000

// reconcileBackups starts the scheduled backup that is due, takes the backup an image change
// waits for (unless gated is false), and summarises the backups in the status. next is when the
// next scheduled one is due; backups are the MySQL's backups.
func (r *Reconciler) reconcileBackups(ctx context.Context, m *appsv1alpha1.MySQL, seen *observed, now time.Time, gated bool) (next time.Duration, backups []appsv1alpha1.MySQLBackup, err error) {
	if next, err = r.reconcileSchedule(ctx, m, now); err != nil {
		return 0, nil, err
	}
	list := &appsv1alpha1.MySQLBackupList{}
	if err := r.Client.List(ctx, list, client.InNamespace(m.Namespace), client.MatchingFields{backupjob.MySQLNameIndex: m.Name}); err != nil {
		return 0, nil, fmt.Errorf("backups of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	if gated {
		if seen.gate, err = r.preUpgradeGate(ctx, m, seen.sts, list.Items, now); err != nil {
			return 0, nil, err
		}
	}
	if err := r.reconcileArchiveBase(ctx, m, list.Items, now); err != nil {
		return 0, nil, err
	}
	summarize(m, list.Items)
	return next, list.Items, nil
}

// dueTime is the latest schedule time from next on that is not after now, and how many earlier
// ones were skipped.
func dueTime(schedule cron.Schedule, next, now time.Time) (due time.Time, missed int32) {
	due = next
	for later := schedule.Next(due); !later.After(now) && missed < maxMissedCount; later = schedule.Next(due) {
		due = later
		missed++
	}
	return due, missed
}

// reconcileSchedule starts the scheduled backup that is due, if any, and returns when the next is.
// The next time is kept in the status: a time that passes while the operator is down is run when it
// is back, and counted as missed if a later one passed too. A suspended schedule has no next time,
// so resuming it misses nothing.
func (r *Reconciler) reconcileSchedule(ctx context.Context, m *appsv1alpha1.MySQL, now time.Time) (time.Duration, error) {
	policy := m.Spec.Backup
	if policy == nil || policy.Suspend {
		if m.Status.Backup != nil {
			m.Status.Backup.NextScheduleTime = nil
		}
		return 0, nil
	}
	schedule, err := resources.ParseSchedule(policy)
	if err != nil {
		return 0, err
	}
	summary := ensureSummary(m)
	upcoming := schedule.Next(now)
	if summary.NextScheduleTime == nil || summary.NextScheduleTime.After(upcoming) {
		// First run, resumed, or a schedule changed to an earlier time.
		summary.NextScheduleTime = ptr.To(metav1.NewTime(upcoming))
	}
	next := summary.NextScheduleTime.Time
	if next.After(now) {
		return next.Sub(now), nil
	}
	due, missed := dueTime(schedule, next, now)
	name := resources.BackupName(m.Name, due.UTC().Format("200601021504"))
	if err := r.createBackup(ctx, m, name, appsv1alpha1.BackupReasonScheduled, nil); err != nil {
		return 0, err
	}
	if missed > 0 {
		summary.MissedSchedules += missed
		event.MissedSchedule.Emit(r.Recorder, m, nil,
			"%d scheduled backups were missed; started the latest, %s", missed, name)
	}
	summary.LastScheduleTime = ptr.To(metav1.NewTime(due))
	summary.NextScheduleTime = ptr.To(metav1.NewTime(upcoming))
	return upcoming.Sub(now), nil
}

// createBackup creates a backup of m taken by the MySQL itself, with the storage of its policy,
// unless it exists. annotations are added to the reason's.
func (r *Reconciler) createBackup(ctx context.Context, m *appsv1alpha1.MySQL, name, reason string, annotations map[string]string) error {
	policy := m.Spec.Backup
	b := &appsv1alpha1.MySQLBackup{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   m.Namespace,
			Labels:      map[string]string{appsv1alpha1.LabelMySQL: m.Name},
			Annotations: map[string]string{appsv1alpha1.AnnotationBackupReason: reason, appsv1alpha1.AnnotationBackupEpoch: strconv.FormatInt(m.Status.Epoch, 10)},
		},
		Spec: appsv1alpha1.MySQLBackupSpec{
			MySQLName:  m.Name,
			Storage:    policy.Storage.DeepCopy(),
			Encryption: policy.Encryption.DeepCopy(),
			Verify:     ptr.To(policy.Verify),
		},
	}
	for k, v := range annotations {
		b.Annotations[k] = v
	}
	// Under the Delete policy the history goes with the MySQL; under Retain it stays, so that a new
	// MySQL can restore from one by name. The artifacts stay in either case.
	if !m.RetainsData() {
		b.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(m, appsv1alpha1.GroupVersion.WithKind("MySQL"))}
	}
	err := r.Client.Create(ctx, b, client.FieldOwner(r.Client.FieldOwner))
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		return fmt.Errorf("create %s backup %s of MySQL %s/%s: %w", reason, name, m.Namespace, m.Name, err)
	}
	log.FromContext(ctx).Info("backup created", "backup", name, "reason", reason)
	return nil
}

// preUpgradeSuffix makes the names of pre-upgrade backups unique over time.
func preUpgradeSuffix(now time.Time) string {
	return "upgrade-" + strconv.FormatInt(now.Unix(), 36)
}

// summarize fills the status summary from the MySQL's backups.
func summarize(m *appsv1alpha1.MySQL, backups []appsv1alpha1.MySQLBackup) {
	if len(backups) == 0 && m.Status.Backup == nil {
		return
	}
	backups = slices.Clone(backups)
	sort.Slice(backups, func(i, j int) bool { return completed(&backups[i]).After(completed(&backups[j])) })
	summary := ensureSummary(m)
	summary.LastSuccessfulBackup, summary.LastSuccessfulTime, summary.LastFailedBackup, summary.LastVerifiedBackup = "", nil, "", ""
	for i := range backups {
		b := &backups[i]
		switch {
		case b.Status.Phase == appsv1alpha1.BackupSucceeded && summary.LastSuccessfulBackup == "":
			summary.LastSuccessfulBackup, summary.LastSuccessfulTime = b.Name, b.Status.CompletionTime
		case b.Status.Phase == appsv1alpha1.BackupFailed && summary.LastSuccessfulBackup == "" && summary.LastFailedBackup == "":
			summary.LastFailedBackup = b.Name
		}
		if b.Status.Verification == appsv1alpha1.VerificationPassed && summary.LastVerifiedBackup == "" {
			summary.LastVerifiedBackup = b.Name
		}
	}
}

func completed(b *appsv1alpha1.MySQLBackup) time.Time {
	if b.Status.CompletionTime != nil {
		return b.Status.CompletionTime.Time
	}
	return b.CreationTimestamp.Time
}

func ensureSummary(m *appsv1alpha1.MySQL) *appsv1alpha1.MySQLBackupStatusSummary {
	if m.Status.Backup == nil {
		m.Status.Backup = &appsv1alpha1.MySQLBackupStatusSummary{}
	}
	return m.Status.Backup
}
