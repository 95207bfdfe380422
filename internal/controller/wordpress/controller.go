// Package wordpress runs WordPresses: it keeps each one's MySQL (when it runs its own), salts,
// wp-content volume, Service and Deployment as the spec says, and starts the site only once its
// database is available.
package wordpress

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/disruption"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/nodeloss"
	"github.com/appkeeper/appkeeper/internal/pass"
	resources "github.com/appkeeper/appkeeper/internal/resources/wordpress"
	"github.com/appkeeper/appkeeper/internal/rollout"
	"github.com/appkeeper/appkeeper/internal/tuning"
)

// mysqlNameIndex indexes WordPresses by the name of the MySQL they use, so that a change of a
// MySQL's status reaches the sites on it.
const mysqlNameIndex = "wordpress.mysqlName"

// Reconciler reconciles WordPresses.
type Reconciler struct {
	Client   kube.Client
	Recorder events.EventRecorder
	// BackupImage holds the appkeeper binary that fills the wp-content of a restored site.
	BackupImage string
}

// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=wordpresses,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=wordpresses/status,verbs=get;patch
// Owner references with blockOwnerDeletion need update on the owner's finalizers where the API
// server enforces OwnerReferencesPermissionEnforcement.
// The MySQL a WordPress owns is itself an owner, of its StatefulSet and Secret.
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=wordpresses/finalizers;mysqls/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqls,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=wordpressbackups,verbs=get;list;watch

// observed is what a pass saw, for the status.
type observed struct {
	db  *appsv1alpha1.MySQL
	dep *appsv1.Deployment
	// dbProblem says why the database cannot be used, or is empty.
	dbProblem string
	dbReason  string
	// pods are the site's pods, or podsErr why they could not be read; lost are the problems of
	// those on lost nodes.
	pods    []corev1.Pod
	podsErr error
	lost    []conditions.PodProblem
	// restore is a restore of wp-content that is not over.
	restore restoreState
	// applied is true once the pass has applied the Deployment, which then runs what it builds.
	applied bool
}

// Reconcile runs the shared pass over the WordPress req names, with the steps of reconcile.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return pass.Run(ctx, r.Client, r.Recorder, req, &appsv1alpha1.WordPress{}, r.reconcile)
}

// reconcile applies the WordPress's children and writes its status once. The site's pods are
// built from the spec or, while the spec's revision is rolled back, from the last good one. A
// retained wp-content PVC carries no owner reference and stays past a deletion.
func (r *Reconciler) reconcile(ctx context.Context, p *pass.Pass[*appsv1alpha1.WordPress]) (_ ctrl.Result, err error) {
	wp := p.Instance
	var seen observed
	// Pods that could not be read only keep a crash loop from showing: the deadline needs none.
	seen.pods, seen.podsErr = kube.ListPods(ctx, r.Client, wp.Namespace, wp.SelectorLabels())
	p.Desired = revision(wp)
	// target is the WordPress as this pass builds it: the spec, or the last good pods of a rolled
	// back one.
	target := wp.DeepCopy()
	p.OnFinish(pass.End{
		RolloutComplete: func() bool { return seen.applied && rolloutComplete(seen.dep, target) },
		Status: func(passErr error) error {
			seen.lost, seen.podsErr = nodeloss.Problems(ctx, r.Client, seen.pods, seen.podsErr)
			wp.Status = computeStatus(target, p.Decision, seen, passErr)
			r.warnRestoreStuck(ctx, p.Original.Status.Conditions, wp.Status.Conditions, wp)
			if change := tuning.Change(p.Original.Status.Tuning, wp.Status.Tuning, "the pods roll with them"); change != "" {
				event.Tuned.Emit(r.Recorder, wp, nil, "%s", change)
			}
			// A failed read of the pods leaves Degraded Unknown and is retried like any other error.
			return seen.podsErr
		},
	})

	if err := r.reconcileDatabase(ctx, wp, &seen); err != nil {
		return ctrl.Result{}, err
	}
	// Until the pass has seen the database, the rollout stays as the status says.
	p.Decision = decide(wp, p.Desired, &seen, time.Now())
	if target.Spec, err = rollout.Target(p.Decision, wp.Spec, podFields); err != nil {
		return ctrl.Result{}, err
	}
	var recheck time.Duration
	// A pod on a lost node would stay until its eviction five minutes later; gone, its Deployment
	// makes another at once. Only when wp-content is shared: a volume one node mounts may still be
	// held by the lost node, and the replacement could not mount it anyway.
	if resources.ContentShared(wp) && seen.podsErr == nil {
		if seen.pods, recheck, err = nodeloss.FreeFrom(ctx, r.Client, r.Recorder, wp, seen.pods); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, r.reconcileSite(ctx, target, &seen)
}

// reconcileSite applies the children of the site itself, wp as the pass builds it: salts,
// wp-content, Service, the restore of a site made from a restore point, and the Deployment.
func (r *Reconciler) reconcileSite(ctx context.Context, wp *appsv1alpha1.WordPress, seen *observed) error {
	if err := pass.Concurrently(
		func() error { return r.reconcileSalts(ctx, wp) },
		func() error {
			return apply.Ensure(ctx, r.Client, wp, wp.ContentClaimName(), &corev1.PersistentVolumeClaim{},
				resources.ContentClaim(wp), corev1ac.ExtractPersistentVolumeClaim)
		},
		func() error {
			return apply.Ensure(ctx, r.Client, wp, wp.ChildName(), &corev1.Service{}, resources.Service(wp), corev1ac.ExtractService)
		},
		func() error {
			return disruption.Keep(ctx, r.Client, wp, wp.ChildName(), wp.SelectorLabels(), wp.DesiredReplicas(), nil)
		},
	); err != nil {
		return err
	}
	// The site's first pod starts on the restored wp-content, not on an empty one.
	if err := r.reconcileRestore(ctx, wp, seen); err != nil || seen.restore.pending() {
		return err
	}
	return r.reconcileDeployment(ctx, wp, seen)
}

// reconcileDatabase applies the MySQL the WordPress owns, or finds the one it references, and
// records whether the site can use it.
func (r *Reconciler) reconcileDatabase(ctx context.Context, wp *appsv1alpha1.WordPress, seen *observed) error {
	db := &appsv1alpha1.MySQL{}
	if wp.OwnsMySQL() {
		if reason, problem, err := r.foreignMySQL(ctx, wp); err != nil || problem != "" {
			seen.dbReason, seen.dbProblem = reason, problem
			return err
		}
		result, err := apply.Object(ctx, r.Client, resources.MySQL(wp), db)
		if err != nil {
			return fmt.Errorf("database of WordPress %s/%s: %w", wp.Namespace, wp.Name, err)
		}
		if result == apply.Created {
			event.Created.Emit(r.Recorder, wp, db, "created MySQL %s", wp.MySQLName())
			seen.dbReason, seen.dbProblem = appsv1alpha1.ReasonWaitingForDatabase, fmt.Sprintf("MySQL %s is being created", wp.MySQLName())
			return nil
		}
	} else if err := r.Client.Get(ctx, client.ObjectKey{Namespace: wp.Namespace, Name: wp.MySQLName()}, db); apierrors.IsNotFound(err) {
		seen.dbReason = appsv1alpha1.ReasonWaitingForDatabase
		seen.dbProblem = fmt.Sprintf("spec.database.mysqlRef: MySQL %s does not exist in namespace %s", wp.MySQLName(), wp.Namespace)
		return nil
	} else if err != nil {
		return fmt.Errorf("database of WordPress %s/%s: %w", wp.Namespace, wp.Name, err)
	}
	seen.db = db
	seen.dbReason, seen.dbProblem = databaseProblem(db)
	return nil
}

// foreignMySQL says why the MySQL the WordPress would run itself is not its own, with the
// DatabaseReady reason, or returns two empty strings. A MySQL of that name that another owner
// controls, or none, is never taken over: its data would then go with the WordPress. One that goes
// with a former WordPress of the same name is waited for; its deletion starts the next pass.
func (r *Reconciler) foreignMySQL(ctx context.Context, wp *appsv1alpha1.WordPress) (reason, problem string, err error) {
	db := &appsv1alpha1.MySQL{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: wp.Namespace, Name: wp.MySQLName()}, db)
	switch {
	case apierrors.IsNotFound(err):
		return "", "", nil
	case err != nil:
		return "", "", fmt.Errorf("database of WordPress %s/%s: %w", wp.Namespace, wp.Name, err)
	case metav1.IsControlledBy(db, wp):
		return "", "", nil
	case !db.DeletionTimestamp.IsZero():
		return appsv1alpha1.ReasonWaitingForDatabase, fmt.Sprintf("MySQL %s is still being deleted", db.Name), nil
	}
	if owner := metav1.GetControllerOf(db); owner != nil && owner.Kind == "WordPress" && owner.Name == wp.Name {
		// The garbage collector has yet to delete it with a former WordPress of this name.
		return appsv1alpha1.ReasonWaitingForDatabase, fmt.Sprintf("MySQL %s belongs to a deleted WordPress %s and is about to be deleted", db.Name, wp.Name), nil
	}
	return appsv1alpha1.ReasonDatabaseMisconfigured, fmt.Sprintf("spec.database.mysql: MySQL %s exists and is not this "+
		"WordPress's: rename or delete it, or use it through spec.database.mysqlRef", db.Name), nil
}

func (r *Reconciler) reconcileSalts(ctx context.Context, wp *appsv1alpha1.WordPress) error {
	key := client.ObjectKey{Namespace: wp.Namespace, Name: wp.SaltsSecretName()}
	_, _, err := apply.GeneratedSecret(ctx, r.Client, wp, key.Name, resources.GenerateSalts,
		func(salts map[string][]byte) *corev1ac.SecretApplyConfiguration {
			return resources.SaltsSecret(wp, salts)
		})
	if err != nil {
		return fmt.Errorf("salts of WordPress %s/%s: %w", wp.Namespace, wp.Name, err)
	}
	return nil
}

// reconcileDeployment applies the Deployment once the database can be used; a site already
// running keeps its Deployment, and follows its spec, while the database is away.
func (r *Reconciler) reconcileDeployment(ctx context.Context, wp *appsv1alpha1.WordPress, seen *observed) error {
	key := client.ObjectKey{Namespace: wp.Namespace, Name: wp.ChildName()}
	dep := &appsv1.Deployment{}
	if seen.db == nil || seen.dbReason == appsv1alpha1.ReasonDatabaseMisconfigured {
		if err := r.Client.Get(ctx, key, dep); err == nil {
			seen.dep = dep
		}
		return nil
	}
	if seen.dbProblem != "" {
		if err := r.Client.Get(ctx, key, dep); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	result, before, err := apply.Child(ctx, r.Client, wp, wp.ChildName(), dep, resources.Deployment(wp, seen.db), appsv1ac.ExtractDeployment)
	if err != nil {
		return fmt.Errorf("deployment of WordPress %s/%s: %w", wp.Namespace, wp.Name, err)
	}
	seen.dep, seen.applied = dep, true
	switch {
	case result == apply.Created:
		event.Created.Emit(r.Recorder, wp, dep,
			"created Deployment %s with %d replicas of %s", wp.ChildName(), wp.DesiredReplicas(), wp.Spec.Image)
	case result == apply.Updated && before.Spec.Replicas != nil && *before.Spec.Replicas != wp.DesiredReplicas():
		event.Scaled.Emit(r.Recorder, wp, nil,
			"scaled from %d to %d replicas", *before.Spec.Replicas, wp.DesiredReplicas())
	}
	return nil
}

// mysqlToWordPresses maps a MySQL to the WordPresses that use it, so that a database becoming
// available starts the sites waiting for it, without polling.
func (r *Reconciler) mysqlToWordPresses(ctx context.Context, obj client.Object) []ctrl.Request {
	sites := &appsv1alpha1.WordPressList{}
	if err := r.Client.List(ctx, sites, client.InNamespace(obj.GetNamespace()), client.MatchingFields{mysqlNameIndex: obj.GetName()}); err != nil {
		return nil
	}
	requests := make([]ctrl.Request, 0, len(sites.Items))
	for _, wp := range sites.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&wp)})
	}
	return requests
}

// SetupWithManager registers the controller. It reacts to the WordPress's spec, to its children,
// to its wp-content PVC, which may have no owner reference to it, to what it reads of its MySQL and
// to that of the WordPressBackup it restores from.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &appsv1alpha1.WordPress{}, mysqlNameIndex,
		func(obj client.Object) []string { return []string{obj.(*appsv1alpha1.WordPress).MySQLName()} }); err != nil {
		return fmt.Errorf("index WordPresses by MySQL: %w", err)
	}
	if err := indexRestoreSource(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	// A child of another resource that held one of the names goes: take the name. The suffixes are
	// those of the child names, read off a WordPress without a name.
	unnamed := &appsv1alpha1.WordPress{}
	freed := kube.EnqueueOnDeleteByChildName(unnamed.ContentClaimName(), unnamed.SaltsSecretName(), unnamed.RestoreJobName())
	return ctrl.NewControllerManagedBy(mgr).
		Named("wordpress").
		For(&appsv1alpha1.WordPress{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.Secret{}).
		Owns(&batchv1.Job{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Watches(&corev1.PersistentVolumeClaim{}, kube.EnqueueInstance(appsv1alpha1.WordPressAppName)).
		// The ReplicaSets own the pods; their labels link them to the site, for Degraded.
		Watches(&corev1.Pod{}, kube.EnqueueInstance(appsv1alpha1.WordPressAppName),
			builder.WithPredicates(conditions.PodStatusChangedPredicate)).
		Watches(&appsv1alpha1.MySQL{}, handler.EnqueueRequestsFromMapFunc(r.mysqlToWordPresses),
			builder.WithPredicates(databaseChangedPredicate)).
		Watches(&appsv1alpha1.WordPressBackup{}, handler.EnqueueRequestsFromMapFunc(r.restoringWordPresses)).
		Watches(&appsv1.Deployment{}, freed).
		Watches(&corev1.Service{}, freed).
		Watches(&corev1.Secret{}, freed).
		Watches(&corev1.PersistentVolumeClaim{}, freed).
		Watches(&batchv1.Job{}, freed).
		Watches(&policyv1.PodDisruptionBudget{}, freed).
		WithOptions(options).
		Complete(r.Client.SkipTerminatingNamespaces(&appsv1alpha1.WordPress{}, r))
}
