package metrics

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// backupRecord is one backup of a resource, as its status tells.
type backupRecord struct {
	uid   types.UID
	phase appsv1alpha1.BackupPhase
	start *metav1.Time
	// completed is the completion time, or the creation time of a backup not complete yet: the
	// order in which backups are newer, as the MySQL's status summary orders them.
	completed    time.Time
	size         int64
	verification appsv1alpha1.VerificationResult
}

// newer orders backups by completion, then by UID so that the choice does not depend on the
// order the cache lists them in.
func (r *backupRecord) newer(than *backupRecord) bool {
	if than == nil {
		return true
	}
	if !r.completed.Equal(than.completed) {
		return r.completed.After(than.completed)
	}
	return strings.Compare(string(r.uid), string(than.uid)) > 0
}

// backupState is what the metrics say of a resource's backups.
type backupState struct {
	lastSuccess, lastVerified *backupRecord
	// newestVerification is the newest backup whose verification ended, passed or failed.
	newestVerification *backupRecord
	failed             []types.UID
}

func (s *backupState) add(r *backupRecord) {
	switch r.phase {
	case appsv1alpha1.BackupSucceeded:
		if r.newer(s.lastSuccess) {
			s.lastSuccess = r
		}
	case appsv1alpha1.BackupFailed:
		s.failed = append(s.failed, r.uid)
	}
	if r.verification == "" {
		return
	}
	if r.newer(s.newestVerification) {
		s.newestVerification = r
	}
	if r.verification == appsv1alpha1.VerificationPassed && r.newer(s.lastVerified) {
		s.lastVerified = r
	}
}

// failedBackups are the failed backups of s, which may be nil.
func (s *backupState) failedBackups() []types.UID {
	if s == nil {
		return nil
	}
	return s.failed
}

// resourceKey names a resource in the series' labels.
type resourceKey struct{ kind, namespace, name string }

// indexBackups summarises the backups of each MySQL (its MySQLBackups, those of the WordPress
// restore points taken of its database included) and of each WordPress (its WordPressBackups,
// whose database half is a MySQLBackup).
func indexBackups(mysqlBackups []appsv1alpha1.MySQLBackup, wpBackups []appsv1alpha1.WordPressBackup) map[resourceKey]*backupState {
	states := map[resourceKey]*backupState{}
	state := func(k resourceKey) *backupState {
		s := states[k]
		if s == nil {
			s = &backupState{}
			states[k] = s
		}
		return s
	}
	byName := make(map[types.NamespacedName]*appsv1alpha1.MySQLBackup, len(mysqlBackups))
	for i := range mysqlBackups {
		b := &mysqlBackups[i]
		byName[types.NamespacedName{Namespace: b.Namespace, Name: b.Name}] = b
		state(resourceKey{kindMySQL, b.Namespace, b.Spec.MySQLName}).add(mySQLBackupRecord(b))
	}
	for i := range wpBackups {
		b := &wpBackups[i]
		database := byName[types.NamespacedName{Namespace: b.Namespace, Name: b.DatabaseBackupName()}]
		state(resourceKey{kindWordPress, b.Namespace, b.Spec.WordPressName}).add(wordPressBackupRecord(b, database))
	}
	return states
}

func mySQLBackupRecord(b *appsv1alpha1.MySQLBackup) *backupRecord {
	return &backupRecord{uid: b.UID, phase: b.Status.Phase, start: b.Status.StartTime,
		completed: completedAt(b.Status.CompletionTime, b.CreationTimestamp), size: b.Status.Size, verification: b.Status.Verification}
}

// wordPressBackupRecord is a restore point as one backup: its size is its database dump's and its
// wp-content archive's together, and its verification is its database dump's, the only half
// verified.
func wordPressBackupRecord(b *appsv1alpha1.WordPressBackup, database *appsv1alpha1.MySQLBackup) *backupRecord {
	r := &backupRecord{uid: b.UID, phase: b.Status.Phase, start: b.Status.StartTime,
		completed: completedAt(b.Status.CompletionTime, b.CreationTimestamp)}
	if b.Status.Content != nil {
		r.size = b.Status.Content.Size
	}
	if database != nil {
		r.size += database.Status.Size
		r.verification = database.Status.Verification
	}
	return r
}

func completedAt(completion *metav1.Time, created metav1.Time) time.Time {
	if completion != nil {
		return completion.Time
	}
	return created.Time
}

// emitBackups emits the backup series of the resource labelled pairs, whose backups are s (nil
// when it has none) and of which failures have failed so far.
func (e emitter) emitBackups(pairs resourcePairs, s *backupState, failures float64) {
	e.counter(backupFailuresDesc, failures, pairs)
	if s == nil {
		e.gauge(backupVerificationFailedDesc, 0, pairs)
		return
	}
	if last := s.lastSuccess; last != nil {
		e.gauge(backupLastSuccessDesc, unixSeconds(last.completed), pairs)
		e.gauge(backupLastSizeDesc, float64(last.size), pairs)
		if last.start != nil {
			e.gauge(backupLastDurationDesc, last.completed.Sub(last.start.Time).Seconds(), pairs)
		}
	}
	if s.lastVerified != nil {
		e.gauge(backupLastVerifiedDesc, unixSeconds(s.lastVerified.completed), pairs)
	}
	failed := 0.0
	if s.newestVerification != nil && s.newestVerification.verification == appsv1alpha1.VerificationFailed {
		failed = 1
	}
	e.gauge(backupVerificationFailedDesc, failed, pairs)
}

func unixSeconds(t time.Time) float64 {
	return float64(t.UnixMilli()) / 1000
}
