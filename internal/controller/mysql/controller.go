// Package mysql runs MySQLs: it keeps each one's credentials, Services, my.cnf and StatefulSet as
// the spec says, keeps the data and the passwords past a deletion unless told otherwise, and
// refuses a downgrade that would leave mysqld unable to read its data.
package mysql

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/nodeloss"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/podmonitor"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// Reconciler reconciles MySQLs.
type Reconciler struct {
	Client   kube.Client
	Recorder events.EventRecorder
	// NewSecretNames makes a cache of the names of the Secrets in the watched namespaces, so that a
	// MySQL whose referenced Secret is created or changed is reconciled at once. It is called the
	// first time a MySQL references a Secret.
	NewSecretNames func() (cache.Cache, error)
	// BackupImage holds the appkeeper binary that fetches a backup into a restored server.
	BackupImage string
	// PodMonitors keeps a PodMonitor per monitored resource where prometheus-operator is installed.
	PodMonitors *podmonitor.Keeper

	referencedSecrets referencedSecretWatch

	wedged rollout.WedgedDeletions

	// members keeps a connection pool per cluster member.
	members memberPools

	// unanswered remembers since when each cluster's primary has not answered.
	unanswered primaryFaults
	// cutOff remembers since when no replica of each cluster has received from its primary.
	cutOff primaryFaults
	// ackStalls remembers since when each cluster's primary has held commits waiting for an
	// acknowledgement, its binary log ending at one position that a replica holds.
	ackStalls primaryFaults

	// shippers remembers what each MySQL's shipper last said, and when.
	shippers shipperReadings

	// drains remembers the drains said to wait for a replica on another node.
	drains waitingDrains
}

// secretRefIndex indexes MySQLs by the name of the Secret they reference.
const secretRefIndex = "mysql.credentialsSecretRef"

// restoreSourceIndex indexes MySQLs by the name of the backup they restore from.
const restoreSourceIndex = "mysql.restore.backupName"

// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqls,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqls/status,verbs=get;patch
// Owner references with blockOwnerDeletion need update on the owner's finalizers where the API
// server enforces OwnerReferencesPermissionEnforcement.
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqls/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqlbackups,verbs=get;list;watch;create

// observed is what a pass saw of the children and built, for the status.
type observed struct {
	// target is the spec the pod and my.cnf are built from.
	target appsv1alpha1.MySQLSpec
	// applied is the MySQL, built from target, whose StatefulSet the pass applied, or nil.
	applied *appsv1alpha1.MySQL
	sts     *appsv1.StatefulSet
	claim   *corev1.PersistentVolumeClaim
	// claimErr is why the data PVC could not be read.
	claimErr error
	// pods are the server's pods, or podsErr why they could not be read; podsRead tells whether
	// the pass has read them; lost are the problems of those on lost nodes.
	pods     []corev1.Pod
	podsErr  error
	podsRead bool
	lost     []conditions.PodProblem
	// refusal explains why the spec's image was not rolled out, or is empty.
	refusal string
	// rollbackRefusal explains why a failed revision was not rolled back, or is empty.
	rollbackRefusal string
	// unverified explains that the spec's image was rolled out unchecked, or is empty.
	unverified string
	// gate is what the backup before an image change allows.
	gate upgradeGate
	// restoreWait explains why the server waits for the backup it is to be restored from.
	restoreWait string
	// clusterPassword is the replication account's password, for a cluster.
	clusterPassword []byte
	// cluster is what the pass saw of a cluster's members.
	cluster clusterState
	// backups are the MySQL's backups, as the pass listed them.
	backups []appsv1alpha1.MySQLBackup
	// archive is what the binary log archive can restore, when the pass read it.
	archive     *appsv1alpha1.PointInTimeRecoveryStatus
	archiveRead bool
}

// Reconcile runs the shared pass over the MySQL req names, with the steps of reconcile.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return pass.Run(ctx, r.Client, r.Recorder, req, &appsv1alpha1.MySQL{}, r.reconcile)
}

// reconcile applies the MySQL's children and writes its status once. Deletion needs no step of its
// own: owner references take the children, and the StatefulSet's claim retention policy and the
// generated Secret's owner reference decide, by the deletion policy, whether data and passwords go too.
func (r *Reconciler) reconcile(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL]) (_ ctrl.Result, err error) {
	m := p.Instance
	// A pass that ends before it decides builds the server from the spec as written.
	seen := observed{target: m.Spec}
	p.OnFinish(pass.End{
		RolloutComplete: func() bool { return seen.applied != nil && runsTarget(seen.sts, seen.applied) },
		Status:          func(passErr error) error { return r.observeStatus(ctx, p, &seen, passErr) },
	})

	// The Services and the disruption budget hold no data: they are applied while the credentials
	// are checked.
	if err := pass.Concurrently(
		func() error { return r.reconcileCredentials(ctx, m, &p.Created) },
		func() error { return r.reconcileServices(ctx, m) },
		func() error { return r.reconcileBudgets(ctx, m, &p.Created) },
	); err != nil {
		return ctrl.Result{}, err
	}
	sts := &appsv1.StatefulSet{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.ChildName()}, sts); err == nil {
		seen.sts = sts
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("get StatefulSet of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	seen.claim, seen.claimErr = r.claim(ctx, m)
	// The data volume remembers the newest server that ran on it, so that a MySQL re-created on a
	// kept volume is held to it too.
	newest := newestImage(resources.Image(seen.sts), dataImage(seen.claim))
	seen.unverified = unverifiedImage(newest, m.Spec.Image)
	if seen.refusal = downgradeRefusal(newest, m.Spec.Image); seen.refusal != "" {
		// Nothing of the workload changes: not the image, and not my.cnf, which the running
		// server would read at its next restart, nor its accounts. A spec never applied has no
		// rollout to judge.
		_, err := r.reconcileBackupAccount(ctx, m, runsExporter(seen.sts))
		return ctrl.Result{}, err
	}
	return r.reconcileServer(ctx, p, &seen)
}

// reconcileServer decides which revision of the server to run, and applies my.cnf and the
// StatefulSet built from it.
func (r *Reconciler) reconcileServer(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], seen *observed) (ctrl.Result, error) {
	m := p.Instance
	// Pods that could not be read show no failure: the status reports the read error, and the
	// pass is retried.
	seen.pods, seen.podsErr = kube.ListPods(ctx, r.Client, m.Namespace, m.SelectorLabels())
	seen.lost, seen.podsErr = nodeloss.Problems(ctx, r.Client, seen.pods, seen.podsErr)
	seen.podsRead = true
	nextBackup, err := r.decide(ctx, p, seen, time.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	target := built(m, seen.target)
	// The accounts mysqld makes at its start follow the pod it starts in: a rolled back revision
	// brings back its own exporter, or takes it away, whatever the spec says.
	if err := pass.Concurrently(
		func() error {
			account, err := r.reconcileBackupAccount(ctx, m, target.Spec.Monitoring.Enabled)
			seen.clusterPassword = account.Password
			return err
		},
		func() error {
			return apply.Ensure(ctx, r.Client, m, m.ConfigMapName(), &corev1.ConfigMap{}, resources.ConfigMap(target), corev1ac.ExtractConfigMap)
		},
	); err != nil {
		return ctrl.Result{}, err
	}
	restore, wait, err := r.restoreSource(ctx, m, seen.sts, seen.claim, seen.pods)
	if seen.restoreWait = wait; err != nil || wait != "" {
		return ctrl.Result{RequeueAfter: nextBackup}, err
	}
	if m.Clustered() && r.BackupImage == "" {
		return ctrl.Result{}, fmt.Errorf("MySQL %s/%s has %d members, and the operator was started without --backup-image: "+
			"it has no image of its own to copy data between members with", m.Namespace, m.Name, m.MemberCount())
	}
	if replacing, err := r.makeStatefulSetForMembers(ctx, m, seen.sts); replacing || err != nil {
		return ctrl.Result{RequeueAfter: probeInterval}, err
	}
	if wait, err := r.reconcileStatefulSet(ctx, m, target, seen, restore, p.Decision.RollBack, &p.Created); wait > 0 || err != nil {
		return ctrl.Result{RequeueAfter: wait}, err
	}
	if err := r.restartSingleServerPods(ctx, m, seen.pods); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.PodMonitors.Reconcile(ctx, r.Client, m, target.Spec.Monitoring.Enabled, m.SelectorLabels()); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.replaceFailedServer(ctx, m, *seen, p.Decision); err != nil {
		return ctrl.Result{}, err
	}
	recheck, err := r.replaceWedgedServer(ctx, m, seen.sts, seen.pods)
	if err != nil {
		return ctrl.Result{}, err
	}
	probe, err := r.reconcileCluster(ctx, p, seen)
	if err != nil {
		return ctrl.Result{}, err
	}
	probe = pass.Earliest(probe, r.observeArchive(ctx, m, seen, time.Now()))
	return ctrl.Result{RequeueAfter: pass.Earliest(pass.Earliest(recheck, nextBackup), probe)}, r.recordDataImage(ctx, m, *seen)
}

// recordDataImage writes on the data volume the image of a server that has completed its rollout
// on it, unless the volume already names that image or a newer one.
func (r *Reconciler) recordDataImage(ctx context.Context, m *appsv1alpha1.MySQL, seen observed) error {
	if seen.claim == nil || !rolloutComplete(seen.sts) {
		return nil
	}
	running := resources.Image(seen.sts)
	if newestImage(running, dataImage(seen.claim)) != running || dataImage(seen.claim) == running {
		return nil
	}
	patch := client.MergeFrom(seen.claim.DeepCopy())
	metav1.SetMetaDataAnnotation(&seen.claim.ObjectMeta, resources.DataImageAnnotation, running)
	if err := r.Client.Patch(ctx, seen.claim, patch, client.FieldOwner(r.Client.FieldOwner)); err != nil {
		return fmt.Errorf("record the server version on the data volume of MySQL %s/%s: %w", m.Namespace, m.Name, client.IgnoreNotFound(err))
	}
	return nil
}

// dataImage is the newest image recorded on the data volume, or empty.
func dataImage(claim *corev1.PersistentVolumeClaim) string {
	if claim == nil {
		return ""
	}
	return claim.Annotations[resources.DataImageAnnotation]
}

func (r *Reconciler) reconcileServices(ctx context.Context, m *appsv1alpha1.MySQL) error {
	return pass.Concurrently(
		func() error {
			return apply.Ensure(ctx, r.Client, m, m.HeadlessServiceName(), &corev1.Service{}, resources.HeadlessService(m), corev1ac.ExtractService)
		},
		func() error {
			return apply.Ensure(ctx, r.Client, m, m.ChildName(), &corev1.Service{}, resources.Service(m), corev1ac.ExtractService)
		},
		func() error {
			if !m.Clustered() {
				return nil
			}
			return apply.Ensure(ctx, r.Client, m, m.ReadServiceName(), &corev1.Service{}, resources.ReadService(m), corev1ac.ExtractService)
		},
	)
}

// claim is the data PVC as the cache has it, or nil when it does not exist.
func (r *Reconciler) claim(ctx context.Context, m *appsv1alpha1.MySQL) (*corev1.PersistentVolumeClaim, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.DataClaimName()}, pvc)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("data volume claim of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	return pvc, nil
}

// SetupWithManager registers the controller. It reacts to the MySQL's spec, to its children, to
// its Secret and data PVC, which may have no owner reference to it, and to the Secret it references.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &appsv1alpha1.MySQL{}, secretRefIndex, func(obj client.Object) []string {
		if ref := obj.(*appsv1alpha1.MySQL).Spec.CredentialsSecretRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index MySQLs by referenced Secret: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &appsv1alpha1.MySQL{}, restoreSourceIndex, func(obj client.Object) []string {
		if restore := obj.(*appsv1alpha1.MySQL).Spec.Restore; restore != nil && restore.BackupName != "" {
			return []string{restore.BackupName}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index MySQLs by the backup they restore: %w", err)
	}
	// A child of another resource that held one of the names goes: take the name. The suffixes are
	// those of the child names, read off a MySQL without a name.
	unnamed := &appsv1alpha1.MySQL{}
	freed := kube.EnqueueOnDeleteByChildName(unnamed.HeadlessServiceName(), unnamed.ConfigMapName(), unnamed.GeneratedSecretName(),
		unnamed.ReadServiceName(), unnamed.ClusterAccountSecretName(), unnamed.PrimaryBudgetName())
	ctl, err := ctrl.NewControllerManagedBy(mgr).
		Named("mysql").
		// An annotation asks for a switchover.
		For(&appsv1alpha1.MySQL{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Watches(&corev1.Secret{}, kube.EnqueueInstance(appsv1alpha1.MySQLAppName)).
		Watches(&corev1.PersistentVolumeClaim{}, kube.EnqueueInstance(appsv1alpha1.MySQLAppName)).
		Watches(&appsv1.StatefulSet{}, freed).
		Watches(&policyv1.PodDisruptionBudget{}, freed).
		Watches(&corev1.Service{}, freed).
		Watches(&corev1.ConfigMap{}, freed).
		Watches(&corev1.Secret{}, freed).
		// The StatefulSet owns the server's pod; its labels link it, for Degraded and for
		// replacing a pod an older spec left broken.
		Watches(&corev1.Pod{}, kube.EnqueueInstance(appsv1alpha1.MySQLAppName),
			builder.WithPredicates(conditions.PodStatusChangedPredicate)).
		// A backup's progress moves the status summary, an upgrade that waits for it, and the
		// MySQLs restored from it.
		Watches(&appsv1alpha1.MySQLBackup{}, handler.EnqueueRequestsFromMapFunc(r.backupsMySQLs)).
		WithOptions(options).
		Build(r.Client.SkipTerminatingNamespaces(&appsv1alpha1.MySQL{}, r))
	if err != nil {
		return err
	}
	r.referencedSecrets = referencedSecretWatch{newNames: r.NewSecretNames, ctl: ctl, mapFunc: r.referencingMySQLs}
	return r.PodMonitors.Watch(ctl, &appsv1alpha1.MySQL{}, &appsv1alpha1.MySQLList{})
}

// backupsMySQLs maps a backup to the MySQL it backs up and to the MySQLs that restore from it.
func (r *Reconciler) backupsMySQLs(ctx context.Context, obj client.Object) []ctrl.Request {
	requests := []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: obj.(*appsv1alpha1.MySQLBackup).Spec.MySQLName}}}
	list := &appsv1alpha1.MySQLList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{restoreSourceIndex: obj.GetName()}); err != nil {
		return requests
	}
	for i := range list.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return requests
}

// referencingMySQLs maps a Secret to the MySQLs in its namespace that reference it.
func (r *Reconciler) referencingMySQLs(ctx context.Context, secret *metav1.PartialObjectMetadata) []ctrl.Request {
	list := &appsv1alpha1.MySQLList{}
	if err := r.Client.List(ctx, list, client.InNamespace(secret.Namespace), client.MatchingFields{secretRefIndex: secret.Name}); err != nil {
		return nil
	}
	requests := make([]ctrl.Request, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return requests
}
