package wordpress

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/backupjob"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
	backupresources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
)

// restoreSourceIndex indexes WordPresses by the WordPressBackup they restore from, so that the
// backup succeeding starts the sites waiting for it.
const restoreSourceIndex = "wordpress.spec.restore.backupName"

// restoreState is what a pass saw of a restore that is not over; its zero value means there is
// none, or it is over.
type restoreState struct {
	// reason is RestoreSourceNotReady or Restoring, and message says what the restore waits for.
	reason, message string
	// stuck is true when only a person can move the restore on.
	stuck bool
}

func (s restoreState) pending() bool { return s.reason != "" }

// reconcileRestore fills the wp-content volume of a site made from a restore point, once, before
// its first pod starts. The site's own MySQL loads the database half itself. Once
// status.restore.completionTime is set nothing of the restore runs again, whatever becomes of
// the Job or the WordPressBackup.
func (r *Reconciler) reconcileRestore(ctx context.Context, wp *appsv1alpha1.WordPress, seen *observed) error {
	spec := wp.Spec.Restore
	if spec == nil || (wp.Status.Restore != nil && wp.Status.Restore.CompletionTime != nil) {
		return nil
	}
	job, pods, err := backupjob.Get(ctx, r.Client, wp.Namespace, wp.RestoreJobName(), backupresources.RestoreContentJobLabels(wp))
	if err != nil {
		return fmt.Errorf("restore of WordPress %s/%s: %w", wp.Namespace, wp.Name, err)
	}
	if job == nil || !metav1.IsControlledBy(job, wp) {
		// A Job of that name that is not this site's is reported as a conflict by the apply.
		return r.startRestore(ctx, wp, seen)
	}
	// The Job that runs already holds the archive's location: the WordPressBackup may go meanwhile.
	source := restoreSource(wp)
	outcome := backupjob.Observe(job, pods, backupresources.ExtractContainer, "")
	switch {
	case !outcome.Done:
		seen.restore = restoreState{reason: appsv1alpha1.ReasonRestoring,
			message: fmt.Sprintf("the Job %s fills wp-content from %s", job.Name, source)}
	case outcome.Failed:
		seen.restore = restoreState{reason: appsv1alpha1.ReasonRestoreSourceNotReady, stuck: true,
			message: fmt.Sprintf("the Job %s could not fill wp-content from %s: %s; delete the Job to try again", job.Name, source, outcome.Message)}
	default:
		completed := ptr.To(metav1.Now())
		if job.Status.CompletionTime != nil {
			completed = job.Status.CompletionTime.DeepCopy()
		}
		wp.Status.Restore = &appsv1alpha1.MySQLRestoreStatus{Source: source, CompletionTime: completed}
		log.FromContext(ctx).Info("wp-content restored", "source", source, "job", job.Name)
		event.Restored.Emit(r.Recorder, wp, job, "wp-content was filled from %s", source)
	}
	return nil
}

// startRestore applies the Job that fills wp-content, once the WordPressBackup has stored its
// archive; until then it records what the restore waits for.
func (r *Reconciler) startRestore(ctx context.Context, wp *appsv1alpha1.WordPress, seen *observed) error {
	name := wp.Spec.Restore.BackupName
	wait := func(reason string, stuck bool, format string, args ...any) error {
		seen.restore = restoreState{reason: reason, stuck: stuck, message: fmt.Sprintf(format, args...)}
		return nil
	}
	if r.BackupImage == "" {
		return wait(appsv1alpha1.ReasonRestoreSourceNotReady, true,
			"the operator was started without --backup-image: it has no image to fill wp-content from WordPressBackup %s with", name)
	}
	b := &appsv1alpha1.WordPressBackup{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: wp.Namespace, Name: name}, b)
	switch {
	case apierrors.IsNotFound(err):
		return wait(appsv1alpha1.ReasonRestoreSourceNotReady, true, "spec.restore.backupName: WordPressBackup %s does not exist", name)
	case err != nil:
		return fmt.Errorf("restore source of WordPress %s/%s: %w", wp.Namespace, wp.Name, err)
	case b.Status.Phase == appsv1alpha1.BackupFailed:
		return wait(appsv1alpha1.ReasonRestoreSourceNotReady, true,
			"spec.restore.backupName: WordPressBackup %s failed: there is nothing to restore", name)
	case b.Status.Phase != appsv1alpha1.BackupSucceeded || b.Status.Content == nil:
		return wait(appsv1alpha1.ReasonRestoreSourceNotReady, false, "waiting for WordPressBackup %s to succeed", name)
	}
	desired := backupresources.RestoreContentJob(wp, b.Status.Content.Location, r.BackupImage)
	job := &batchv1.Job{}
	result, _, err := apply.Child(ctx, r.Client, wp, wp.RestoreJobName(), job, desired, batchv1ac.ExtractJob)
	if err != nil {
		return fmt.Errorf("restore Job of WordPress %s/%s: %w", wp.Namespace, wp.Name, err)
	}
	if result == apply.Created {
		loc := b.Status.Content.Location
		log.FromContext(ctx).Info("restore started", "source", restoreSource(wp), "storage", loc.Storage.Describe(), "key", loc.Key)
		event.Created.Emit(r.Recorder, wp, job,
			"created Job %s to fill wp-content from WordPressBackup %s", job.Name, name)
	}
	wp.Status.Restore = &appsv1alpha1.MySQLRestoreStatus{Source: restoreSource(wp)}
	seen.restore = restoreState{reason: appsv1alpha1.ReasonRestoring,
		message: fmt.Sprintf("the Job %s fills wp-content from %s", wp.RestoreJobName(), restoreSource(wp))}
	return nil
}

func restoreSource(wp *appsv1alpha1.WordPress) string {
	return "WordPressBackup " + wp.Spec.Restore.BackupName
}

// restoreConditions makes the conditions say what a restore that is not over waits for: the
// site is not Available, Progressing while the restore can go on, and Degraded when it cannot
// without a person.
func restoreConditions(seen observed, reconcileErr error, available, progressing, degraded *conditions.Condition) {
	r := seen.restore
	if !r.pending() || seen.dep != nil {
		return
	}
	available.Status, available.Reason = metav1.ConditionFalse, r.reason
	available.Message = "the site starts once wp-content is restored: " + r.message
	progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, r.reason, r.message
	if r.stuck {
		progressing.Status, progressing.Message = metav1.ConditionFalse, "the restore cannot go on; see Degraded"
		if reconcileErr == nil && !degraded.IsTrue() {
			degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, r.reason, r.message
		}
	}
}

// warnRestoreStuck records a Warning Event when Degraded turns to a restore that cannot go on,
// once per change of its message.
func (r *Reconciler) warnRestoreStuck(ctx context.Context, before, after []metav1.Condition, wp *appsv1alpha1.WordPress) {
	now := meta.FindStatusCondition(after, appsv1alpha1.ConditionDegraded)
	if now == nil || now.Status != metav1.ConditionTrue || now.Reason != appsv1alpha1.ReasonRestoreSourceNotReady {
		return
	}
	if was := meta.FindStatusCondition(before, appsv1alpha1.ConditionDegraded); was != nil &&
		was.Status == now.Status && was.Reason == now.Reason && was.Message == now.Message {
		return
	}
	log.FromContext(ctx).Info("the restore waits for a person", "problem", now.Message)
	event.RestoreStuck.Emit(r.Recorder, wp, nil, "%s", now.Message)
}

// restoringWordPresses maps a WordPressBackup to the WordPresses restoring from it.
func (r *Reconciler) restoringWordPresses(ctx context.Context, obj client.Object) []ctrl.Request {
	sites := &appsv1alpha1.WordPressList{}
	if err := r.Client.List(ctx, sites, client.InNamespace(obj.GetNamespace()), client.MatchingFields{restoreSourceIndex: obj.GetName()}); err != nil {
		return nil
	}
	requests := make([]ctrl.Request, 0, len(sites.Items))
	for _, wp := range sites.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&wp)})
	}
	return requests
}

// indexRestoreSource registers restoreSourceIndex.
func indexRestoreSource(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &appsv1alpha1.WordPress{}, restoreSourceIndex, func(obj client.Object) []string {
		if restore := obj.(*appsv1alpha1.WordPress).Spec.Restore; restore != nil {
			return []string{restore.BackupName}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index WordPresses by the WordPressBackup they restore: %w", err)
	}
	return nil
}
