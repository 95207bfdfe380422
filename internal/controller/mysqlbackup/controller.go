// Package mysqlbackup takes MySQLBackups: it runs the Job that dumps the server into the storage,
// records what the Job reports, deletes what the MySQL's retention prunes, and verifies the backup
// in a scratch server when asked.
package mysqlbackup

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/backupjob"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/pass"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
	"github.com/appkeeper/appkeeper/internal/statuspatch"
)

// Reconciler reconciles MySQLBackups.
type Reconciler struct {
	Client   kube.Client
	Recorder events.EventRecorder
	// BackupImage holds the appkeeper binary the Jobs run; without it no backup starts.
	BackupImage string
}

// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqlbackups,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqlbackups/status,verbs=get;patch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqlbackups/finalizers,verbs=update
// delete: a finished Job that mounts a backup volume goes, as its pod holds the volume.
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// status is a backup's status, as the status patch compares and writes it.
func status(b *appsv1alpha1.MySQLBackup) any { return b.Status }

// Reconcile moves a backup one step: start its Job once the MySQL is Available, record the Job's
// outcome, verify it. The status is written once, at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	b := &appsv1alpha1.MySQLBackup{}
	if goOn, result, err := pass.Read(ctx, r.Client, req, b, status); !goOn {
		return result, err
	}
	original := b.DeepCopy()
	defer func() {
		b.Status.ObservedGeneration = b.Generation
		conditions.SetBackupHealth(&b.Status.Conditions, b.Generation)
		r.recordTransitions(ctx, original, b)
		err = errors.Join(err, statuspatch.Patch(ctx, r.Client, original, b, status))
		if err == nil {
			// Only once the outcome is recorded may the Jobs it was read from go.
			err = r.deleteFinishedJobs(ctx, b)
		}
	}()
	if b.Status.Reason == "" {
		b.Status.Reason = reasonOf(b)
	}
	m := &appsv1alpha1.MySQL{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.MySQLName}, m); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("MySQL of MySQLBackup %s/%s: %w", b.Namespace, b.Name, err)
		}
		m = nil
	}
	switch b.Status.Phase {
	case "", appsv1alpha1.BackupPending:
		return ctrl.Result{}, r.start(ctx, b, m)
	case appsv1alpha1.BackupRunning:
		return ctrl.Result{}, r.observeDump(ctx, b, m)
	case appsv1alpha1.BackupSucceeded:
		return ctrl.Result{}, r.verify(ctx, b, m)
	}
	return ctrl.Result{}, nil
}

// start creates the dump Job once everything it needs is there; until then the backup is Pending
// and says what it waits for.
func (r *Reconciler) start(ctx context.Context, b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL) error {
	pending := func(format string, args ...any) error {
		b.Status.Phase = appsv1alpha1.BackupPending
		setComplete(b, metav1.ConditionUnknown, appsv1alpha1.ReasonWaitingForMySQL, fmt.Sprintf(format, args...))
		return nil
	}
	if m == nil {
		return pending("MySQL %s does not exist", b.Spec.MySQLName)
	}
	loc, ok := Location(b, m)
	if !ok {
		b.Status.Phase = appsv1alpha1.BackupFailed
		b.Status.CompletionTime = ptr.To(metav1.Now())
		setComplete(b, metav1.ConditionFalse, appsv1alpha1.ReasonInvalidSpec,
			fmt.Sprintf("no storage: set spec.storage, or spec.backup.storage on MySQL %s", m.Name))
		return nil
	}
	if r.BackupImage == "" {
		return pending("the operator was started without --backup-image: it has no image to run the backup in")
	}
	if !apimeta.IsStatusConditionTrue(m.Status.Conditions, appsv1alpha1.ConditionAvailable) {
		return pending("MySQL %s is not Available", m.Name)
	}
	prune, err := r.prunable(ctx, b, m)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(prune))
	for _, p := range prune {
		if p.Status.Location != nil {
			keys = append(keys, p.Status.Location.Key)
		}
	}
	member := resources.SourceMember(m)
	job := DumpJobFor(b, m, member, loc, keys, r.BackupImage)
	if err := apply.Ensure(ctx, r.Client, b, b.JobName(), &batchv1.Job{}, job, batchv1ac.ExtractJob); err != nil {
		return err
	}
	log.FromContext(ctx).Info("backup started", "mysql", m.Name, "member", member, "storage", loc.Storage.Describe(), "key", loc.Key, "prune", keys)
	b.Status.Member = member
	b.Status.Phase = appsv1alpha1.BackupRunning
	b.Status.StartTime = ptr.To(metav1.Now())
	b.Status.Location = &loc
	setComplete(b, metav1.ConditionUnknown, appsv1alpha1.ReasonBackupRunning, "the backup Job "+b.JobName()+" runs")
	return nil
}

// observeDump records the dump Job's outcome, and prunes what the dump deleted.
func (r *Reconciler) observeDump(ctx context.Context, b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL) error {
	job, pods, err := r.job(ctx, b, b.JobName())
	if err != nil {
		return err
	}
	if job == nil {
		return r.fail(b, "the backup Job "+b.JobName()+" was deleted before it completed")
	}
	outcome := backupjob.Observe(job, pods, DumpContainerName, InstallContainerName)
	b.Status.Attempts = outcome.Attempts
	switch {
	case !outcome.Done:
		return nil
	case outcome.Failed:
		return r.fail(b, outcome.Message)
	case outcome.Result == nil || outcome.Result.SHA256 == "":
		return r.fail(b, "the backup Job completed without reporting an artifact")
	}
	res := outcome.Result
	b.Status.Phase = appsv1alpha1.BackupSucceeded
	b.Status.CompletionTime = completionTime(job)
	b.Status.Size, b.Status.SHA256, b.Status.Encrypted = res.Size, res.SHA256, res.Encrypted
	b.Status.ServerVersion, b.Status.BinlogPosition, b.Status.GTIDPosition = res.ServerVersion, res.BinlogPosition, res.GTIDPosition
	b.Status.Databases, b.Status.Tables = int32(res.Databases), int32(res.Tables)
	setComplete(b, metav1.ConditionTrue, appsv1alpha1.ReasonBackupSucceeded,
		fmt.Sprintf("%d tables of %d databases, %d bytes", res.Tables, res.Databases, res.Size))
	if err := r.deletePruned(ctx, b, res.Pruned); err != nil {
		return err
	}
	return r.verify(ctx, b, m)
}

// deleteFinishedJobs deletes the Jobs of a backup kept on a volume claim once their outcome is in
// the status: their pods, even completed, keep the claim from being deleted. Jobs that write to
// object storage stay, with their logs, until the backup goes.
func (r *Reconciler) deleteFinishedJobs(ctx context.Context, b *appsv1alpha1.MySQLBackup) error {
	if b.Status.Location == nil || b.Status.Location.Storage.Volume == nil {
		return nil
	}
	var finished []string
	if b.Status.Phase == appsv1alpha1.BackupSucceeded || b.Status.Phase == appsv1alpha1.BackupFailed {
		finished = append(finished, b.JobName())
	}
	// A verification that could not run keeps its Job: without it, the next pass would start another.
	if b.Status.Verification != "" {
		finished = append(finished, b.VerifyJobName())
	}
	for _, name := range finished {
		if err := backupjob.Delete(ctx, r.Client, b.Namespace, name, "the backup volume"); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) fail(b *appsv1alpha1.MySQLBackup, message string) error {
	b.Status.Phase = appsv1alpha1.BackupFailed
	b.Status.CompletionTime = ptr.To(metav1.Now())
	setComplete(b, metav1.ConditionFalse, appsv1alpha1.ReasonBackupFailed, message)
	return nil
}

// deletePruned deletes the backups whose artifacts the dump deleted.
func (r *Reconciler) deletePruned(ctx context.Context, b *appsv1alpha1.MySQLBackup, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	pruned := map[string]bool{}
	for _, k := range keys {
		pruned[k] = true
	}
	siblings, err := r.siblings(ctx, b)
	if err != nil {
		return err
	}
	for i := range siblings {
		s := &siblings[i]
		if s.Name == b.Name || s.Status.Location == nil || !pruned[s.Status.Location.Key] {
			continue
		}
		if err := r.Client.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete pruned MySQLBackup %s/%s: %w", s.Namespace, s.Name, err)
		}
		event.BackupPruned.Emit(r.Recorder, b, s,
			"deleted backup %s and its artifact, as the retention of MySQL %s says", s.Name, b.Spec.MySQLName)
	}
	return nil
}

// prunable are the siblings a scheduled or pre-upgrade backup deletes once it succeeded.
func (r *Reconciler) prunable(ctx context.Context, b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL) ([]appsv1alpha1.MySQLBackup, error) {
	if b.Status.Reason == appsv1alpha1.BackupReasonOnDemand || m.Spec.Backup == nil || m.Spec.Backup.Retention == nil {
		return nil, nil
	}
	siblings, err := r.siblings(ctx, b)
	if err != nil {
		return nil, err
	}
	others := siblings[:0]
	for _, s := range siblings {
		if s.Name != b.Name {
			others = append(others, s)
		}
	}
	return Prunable(others, m.Spec.Backup.Retention, m.Spec.Backup.Verify, time.Now()), nil
}

func (r *Reconciler) siblings(ctx context.Context, b *appsv1alpha1.MySQLBackup) ([]appsv1alpha1.MySQLBackup, error) {
	list := &appsv1alpha1.MySQLBackupList{}
	if err := r.Client.List(ctx, list, client.InNamespace(b.Namespace), client.MatchingFields{backupjob.MySQLNameIndex: b.Spec.MySQLName}); err != nil {
		return nil, fmt.Errorf("backups of MySQL %s/%s: %w", b.Namespace, b.Spec.MySQLName, err)
	}
	return list.Items, nil
}

// job is the named Job of b and its pods, or nil when it does not exist.
func (r *Reconciler) job(ctx context.Context, b *appsv1alpha1.MySQLBackup, name string) (*batchv1.Job, []corev1.Pod, error) {
	return backupjob.Get(ctx, r.Client, b.Namespace, name, JobPodSelector(b))
}

func completionTime(job *batchv1.Job) *metav1.Time {
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.DeepCopy()
	}
	return ptr.To(metav1.Now())
}

func reasonOf(b *appsv1alpha1.MySQLBackup) string {
	switch reason := b.Annotations[appsv1alpha1.AnnotationBackupReason]; reason {
	case appsv1alpha1.BackupReasonScheduled, appsv1alpha1.BackupReasonPreUpgrade, appsv1alpha1.BackupReasonPointInTimeBase:
		return reason
	}
	return appsv1alpha1.BackupReasonOnDemand
}

// SetupWithManager registers the controller. It reacts to the backup, to its Jobs, and to its
// MySQL becoming Available.
// The MySQL controller reads the same index: backupjob.IndexBackupsByMySQL registers it, once,
// before both.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("mysqlbackup").
		For(&appsv1alpha1.MySQLBackup{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Watches(&appsv1alpha1.MySQL{}, handler.EnqueueRequestsFromMapFunc(r.waitingBackups)).
		WithOptions(options).
		Complete(r.Client.SkipTerminatingNamespaces(&appsv1alpha1.MySQLBackup{}, r))
}

// waitingBackups maps a MySQL to its backups that wait for it, or that a verification may need.
func (r *Reconciler) waitingBackups(ctx context.Context, obj client.Object) []ctrl.Request {
	list := &appsv1alpha1.MySQLBackupList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{backupjob.MySQLNameIndex: obj.GetName()}); err != nil {
		return nil
	}
	var requests []ctrl.Request
	for i := range list.Items {
		if phase := list.Items[i].Status.Phase; phase == "" || phase == appsv1alpha1.BackupPending {
			requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return requests
}
