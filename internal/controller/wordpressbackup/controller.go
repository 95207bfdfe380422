// Package wordpressbackup takes WordPressBackups: a restore point of a site is a MySQLBackup of its
// database and an archive of its wp-content, taken together; it succeeds when both have.
package wordpressbackup

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
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

// Reconciler reconciles WordPressBackups.
type Reconciler struct {
	Client   kube.Client
	Recorder events.EventRecorder
	// BackupImage holds the appkeeper binary the archive Job runs.
	BackupImage string
}

// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=wordpressbackups,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=wordpressbackups/status,verbs=get;patch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=wordpressbackups/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqlbackups,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=wordpresses,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqls,verbs=get;list;watch
// delete: a finished archive Job goes, as its pod holds the site's volume.
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// status is a backup's status, as the status patch compares and writes it.
func status(b *appsv1alpha1.WordPressBackup) any { return b.Status }

// Reconcile starts both halves of a restore point once the site exists, then records their outcome.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	b := &appsv1alpha1.WordPressBackup{}
	if goOn, result, err := pass.Read(ctx, r.Client, req, b, status); !goOn {
		return result, err
	}
	original := b.DeepCopy()
	defer func() {
		b.Status.ObservedGeneration = b.Generation
		conditions.SetBackupHealth(&b.Status.Conditions, b.Generation)
		r.recordTransition(ctx, original, b)
		err = errors.Join(err, statuspatch.Patch(ctx, r.Client, original, b, status))
		// Only once the outcome is recorded may the Job it was read from go.
		if err == nil && (b.Status.Phase == appsv1alpha1.BackupSucceeded || b.Status.Phase == appsv1alpha1.BackupFailed) {
			err = r.deleteArchiveJob(ctx, b)
		}
	}()
	switch {
	case b.Status.Phase == appsv1alpha1.BackupFailed:
		return ctrl.Result{}, nil
	case b.Status.Phase == appsv1alpha1.BackupSucceeded:
		return ctrl.Result{}, r.observeVerification(ctx, b)
	case b.Status.Content == nil:
		return ctrl.Result{}, r.start(ctx, b)
	}
	return ctrl.Result{}, r.observe(ctx, b)
}

// start creates the database's MySQLBackup and the archive Job, once the site and its storage are known.
func (r *Reconciler) start(ctx context.Context, b *appsv1alpha1.WordPressBackup) error {
	pending := func(format string, args ...any) error {
		b.Status.Phase = appsv1alpha1.BackupPending
		setComplete(b, metav1.ConditionUnknown, appsv1alpha1.ReasonWaitingForMySQL, fmt.Sprintf(format, args...))
		return nil
	}
	wp := &appsv1alpha1.WordPress{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.WordPressName}, wp); apierrors.IsNotFound(err) {
		return pending("WordPress %s does not exist", b.Spec.WordPressName)
	} else if err != nil {
		return fmt.Errorf("WordPress of WordPressBackup %s/%s: %w", b.Namespace, b.Name, err)
	}
	m := &appsv1alpha1.MySQL{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: wp.MySQLName()}, m); apierrors.IsNotFound(err) {
		return pending("MySQL %s of WordPress %s does not exist", wp.MySQLName(), wp.Name)
	} else if err != nil {
		return fmt.Errorf("MySQL of WordPressBackup %s/%s: %w", b.Namespace, b.Name, err)
	}
	storage, encryption := resources.StorageOf(b.Spec.Storage, b.Spec.Encryption, m)
	if storage == nil {
		b.Status.Phase = appsv1alpha1.BackupFailed
		b.Status.CompletionTime = ptr.To(metav1.Now())
		setComplete(b, metav1.ConditionFalse, appsv1alpha1.ReasonInvalidSpec,
			fmt.Sprintf("no storage: set spec.storage, or spec.backup.storage on MySQL %s", m.Name))
		return nil
	}
	if r.BackupImage == "" {
		return pending("the operator was started without --backup-image: it has no image to run the backup in")
	}
	if err := r.createDatabaseBackup(ctx, b, m, storage, encryption); err != nil {
		return err
	}
	loc := appsv1alpha1.BackupLocation{Storage: *storage.DeepCopy(), Key: b.Key(*storage), Encryption: encryption.DeepCopy()}
	if err := apply.Ensure(ctx, r.Client, b, b.ContentJobName(), &batchv1.Job{},
		resources.ArchiveJob(b, wp, loc, r.BackupImage), batchv1ac.ExtractJob); err != nil {
		return err
	}
	log.FromContext(ctx).Info("restore point started", "wordpress", wp.Name, "database", b.DatabaseBackupName(), "key", loc.Key)
	b.Status.Phase = appsv1alpha1.BackupRunning
	b.Status.StartTime = ptr.To(metav1.Now())
	b.Status.DatabaseBackup = b.DatabaseBackupName()
	b.Status.Content = &appsv1alpha1.WordPressContentBackup{Location: loc}
	setComplete(b, metav1.ConditionUnknown, appsv1alpha1.ReasonBackupRunning,
		fmt.Sprintf("MySQLBackup %s and the Job %s run", b.DatabaseBackupName(), b.ContentJobName()))
	return nil
}

func (r *Reconciler) createDatabaseBackup(ctx context.Context, b *appsv1alpha1.WordPressBackup, m *appsv1alpha1.MySQL, storage *appsv1alpha1.BackupStorage, encryption *appsv1alpha1.BackupEncryption) error {
	db := &appsv1alpha1.MySQLBackup{
		ObjectMeta: metav1.ObjectMeta{
			Name:            b.DatabaseBackupName(),
			Namespace:       b.Namespace,
			Labels:          map[string]string{appsv1alpha1.LabelMySQL: m.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(b, appsv1alpha1.GroupVersion.WithKind("WordPressBackup"))},
		},
		Spec: appsv1alpha1.MySQLBackupSpec{MySQLName: m.Name, Storage: storage.DeepCopy(), Encryption: encryption.DeepCopy(), Verify: ptr.To(b.Spec.Verify)},
	}
	if err := r.Client.Create(ctx, db, client.FieldOwner(r.Client.FieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("database backup of WordPressBackup %s/%s: %w", b.Namespace, b.Name, err)
	}
	return nil
}

// observe records the outcome of both halves: the restore point succeeds when both did, and fails
// when either failed.
func (r *Reconciler) observe(ctx context.Context, b *appsv1alpha1.WordPressBackup) error {
	db := &appsv1alpha1.MySQLBackup{}
	dbErr := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Status.DatabaseBackup}, db)
	if client.IgnoreNotFound(dbErr) != nil {
		return fmt.Errorf("database backup of WordPressBackup %s/%s: %w", b.Namespace, b.Name, dbErr)
	}
	job, pods, err := backupjob.Get(ctx, r.Client, b.Namespace, b.ContentJobName(), resources.ContentJobLabels(b))
	if err != nil {
		return err
	}
	switch {
	case apierrors.IsNotFound(dbErr):
		return r.fail(b, "the MySQLBackup "+b.Status.DatabaseBackup+" was deleted before it completed")
	case db.Status.Phase == appsv1alpha1.BackupFailed:
		return r.fail(b, "the database backup failed: "+conditionMessage(db.Status.Conditions, appsv1alpha1.ConditionComplete))
	case job == nil:
		return r.fail(b, "the Job "+b.ContentJobName()+" was deleted before it completed")
	}
	outcome := backupjob.Observe(job, pods, resources.ArchiveContainer, "")
	switch {
	case outcome.Failed:
		return r.fail(b, "the wp-content archive failed: "+outcome.Message)
	case !outcome.Done || db.Status.Phase != appsv1alpha1.BackupSucceeded:
		return nil
	case outcome.Result == nil || outcome.Result.SHA256 == "":
		return r.fail(b, "the wp-content Job completed without reporting an archive")
	}
	res := outcome.Result
	c := b.Status.Content
	c.Size, c.SHA256, c.Files, c.Bytes = res.Size, res.SHA256, int64(res.Files), res.Bytes
	b.Status.Phase = appsv1alpha1.BackupSucceeded
	b.Status.CompletionTime = ptr.To(metav1.Now())
	setComplete(b, metav1.ConditionTrue, appsv1alpha1.ReasonBackupSucceeded,
		fmt.Sprintf("database in MySQLBackup %s (%d tables); wp-content: %d files, %d bytes", db.Name, db.Status.Tables, res.Files, res.Bytes))
	recordVerification(b, db)
	return nil
}

// observeVerification follows the verification of the database dump, when asked for, until its
// MySQLBackup gives a verdict.
func (r *Reconciler) observeVerification(ctx context.Context, b *appsv1alpha1.WordPressBackup) error {
	if !b.Spec.Verify || !conditions.VerificationPending(b.Status.Conditions) {
		return nil
	}
	db := &appsv1alpha1.MySQLBackup{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Status.DatabaseBackup}, db); apierrors.IsNotFound(err) {
		conditions.Set(&b.Status.Conditions, b.Generation, conditions.Condition{Type: appsv1alpha1.ConditionVerified,
			Status: metav1.ConditionUnknown, Reason: appsv1alpha1.ReasonVerificationFailed,
			Message: "the MySQLBackup " + b.Status.DatabaseBackup + " was deleted before its verification ended"})
		return nil
	} else if err != nil {
		return fmt.Errorf("database backup of WordPressBackup %s/%s: %w", b.Namespace, b.Name, err)
	}
	recordVerification(b, db)
	return nil
}

// recordVerification takes on the verdict that db, the MySQLBackup of the database, gives on the
// dump when verification was asked for; until it has one, the verification is under way.
func recordVerification(b *appsv1alpha1.WordPressBackup, db *appsv1alpha1.MySQLBackup) {
	if !b.Spec.Verify {
		return
	}
	verified := conditions.Condition{Type: appsv1alpha1.ConditionVerified, Status: metav1.ConditionUnknown,
		Reason: appsv1alpha1.ReasonVerificationRunning, Message: "MySQLBackup " + db.Name + " verifies the database dump"}
	if c := apimeta.FindStatusCondition(db.Status.Conditions, appsv1alpha1.ConditionVerified); c != nil {
		verified.Status, verified.Reason, verified.Message = c.Status, c.Reason, "MySQLBackup "+db.Name+": "+c.Message
	}
	conditions.Set(&b.Status.Conditions, b.Generation, verified)
}

// deleteArchiveJob deletes the finished archive Job and its pod once the outcome is recorded: a
// pod, even completed, that names the site's volume keeps the volume from being deleted.
func (r *Reconciler) deleteArchiveJob(ctx context.Context, b *appsv1alpha1.WordPressBackup) error {
	return backupjob.Delete(ctx, r.Client, b.Namespace, b.ContentJobName(), "the site's volume")
}

func (r *Reconciler) fail(b *appsv1alpha1.WordPressBackup, message string) error {
	b.Status.Phase = appsv1alpha1.BackupFailed
	b.Status.CompletionTime = ptr.To(metav1.Now())
	setComplete(b, metav1.ConditionFalse, appsv1alpha1.ReasonBackupFailed, message)
	return nil
}

func setComplete(b *appsv1alpha1.WordPressBackup, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(&b.Status.Conditions, b.Generation, conditions.Condition{
		Type: appsv1alpha1.ConditionComplete, Status: status, Reason: reason, Message: message})
}

func conditionMessage(conditions []metav1.Condition, t string) string {
	if c := apimeta.FindStatusCondition(conditions, t); c != nil {
		return c.Message
	}
	return ""
}

// recordTransition emits an Event when the restore point succeeds or fails.
func (r *Reconciler) recordTransition(ctx context.Context, original, b *appsv1alpha1.WordPressBackup) {
	if original.Status.Phase == b.Status.Phase {
		return
	}
	message := conditionMessage(b.Status.Conditions, appsv1alpha1.ConditionComplete)
	switch b.Status.Phase {
	case appsv1alpha1.BackupSucceeded:
		log.FromContext(ctx).Info("restore point succeeded")
		event.BackupSucceeded.Emit(r.Recorder, b, nil,
			"backed up WordPress %s: %s", b.Spec.WordPressName, message)
	case appsv1alpha1.BackupFailed:
		log.FromContext(ctx).Info("restore point failed", "reason", message)
		event.BackupFailed.Emit(r.Recorder, b, nil,
			"backup of WordPress %s failed: %s", b.Spec.WordPressName, message)
	}
}

// SetupWithManager registers the controller. It reacts to the restore point, to its MySQLBackup
// and to its Job.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("wordpressbackup").
		For(&appsv1alpha1.WordPressBackup{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1.Job{}).
		Owns(&appsv1alpha1.MySQLBackup{}).
		// A restore point that waits for its site starts when the site or its MySQL appears.
		Watches(&appsv1alpha1.WordPress{}, handler.EnqueueRequestsFromMapFunc(r.pendingInNamespace)).
		Watches(&appsv1alpha1.MySQL{}, handler.EnqueueRequestsFromMapFunc(r.pendingInNamespace)).
		WithOptions(options).
		Complete(r.Client.SkipTerminatingNamespaces(&appsv1alpha1.WordPressBackup{}, r))
}

// pendingInNamespace maps a site or a MySQL to the restore points of its namespace that have not
// started: few, as a restore point starts as soon as its site exists.
func (r *Reconciler) pendingInNamespace(ctx context.Context, obj client.Object) []ctrl.Request {
	list := &appsv1alpha1.WordPressBackupList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
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
