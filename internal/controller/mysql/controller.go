// Package mysql runs MySQLs: it keeps each one's credentials, Services, my.cnf and StatefulSet as
// the spec says, keeps the data and the passwords past a deletion unless told otherwise, and
// refuses a downgrade that would leave mysqld unable to read its data.
package mysql

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/reconcile"
	"github.com/appkeeper/appkeeper/internal/resources/common"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// Reconciler reconciles MySQLs.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets the cache does not hold: the ones users reference.
	APIReader client.Reader
	Recorder  events.EventRecorder
}

// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqls,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=mysqls/status,verbs=get;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=services;configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// observed is what a pass saw of the children, for the status.
type observed struct {
	sts   *appsv1.StatefulSet
	claim *corev1.PersistentVolumeClaim
	// refusal explains why the spec's image was not rolled out, or is empty.
	refusal string
	// unverified explains that the spec's image was rolled out unchecked, or is empty.
	unverified string
}

// Reconcile applies the MySQL's children and writes its status once. Deletion needs no step of its
// own: owner references take the children, and the StatefulSet's claim retention policy and the
// generated Secret's owner reference decide, by the deletion policy, whether data and passwords go too.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	m := &appsv1alpha1.MySQL{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	original := m.DeepCopy()
	var seen observed
	defer func() {
		if seen.claim == nil {
			seen.claim = r.claim(ctx, m)
		}
		m.Status = computeStatus(m, seen, err)
		r.recordTransitions(original, m)
		err = errors.Join(err, reconcile.PatchStatus(ctx, r.Client, original, m,
			func(m *appsv1alpha1.MySQL) any { return m.Status }))
	}()

	if err := r.reconcileCredentials(ctx, m); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileServices(ctx, m); err != nil {
		return ctrl.Result{}, err
	}
	sts := &appsv1.StatefulSet{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.ChildName()}, sts); err == nil {
		seen.sts = sts
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("get StatefulSet of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	seen.claim = r.claim(ctx, m)
	// The data volume remembers the newest server that ran on it, so that a MySQL re-created on a
	// kept volume is held to it too.
	newest := newestImage(resources.Image(seen.sts), dataImage(seen.claim))
	seen.unverified = unverifiedImage(newest, m.Spec.Image)
	if seen.refusal = downgradeRefusal(newest, m.Spec.Image); seen.refusal != "" {
		// Nothing of the workload changes: not the image, and not my.cnf, which the running
		// server would read at its next restart.
		return ctrl.Result{}, nil
	}
	if err := reconcile.ApplyChild(ctx, r.Client, m, m.ConfigMapName(), &corev1.ConfigMap{}, resources.ConfigMap(m), corev1ac.ExtractConfigMap); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileStatefulSet(ctx, m, &seen); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.recordDataImage(ctx, m, seen)
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
	if err := r.Client.Patch(ctx, seen.claim, patch, client.FieldOwner(reconcile.FieldOwner)); err != nil {
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

// reconcileCredentials checks a referenced Secret, or generates the Secret once and keeps its
// metadata as the deletion policy says.
func (r *Reconciler) reconcileCredentials(ctx context.Context, m *appsv1alpha1.MySQL) error {
	if ref := m.Spec.CredentialsSecretRef; ref != nil {
		return r.checkReferencedSecret(ctx, m, ref.Name)
	}
	key := client.ObjectKey{Namespace: m.Namespace, Name: m.GeneratedSecretName()}
	data, created, err := reconcile.GeneratedSecret(ctx, r.Client, r.APIReader, key,
		common.Labels(m.SelectorLabels(), appsv1alpha1.ManagedByValue), generatePasswords)
	if err != nil {
		return fmt.Errorf("credentials of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	if created {
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, appsv1alpha1.EventCreated, "Create",
			"generated Secret %s with random passwords", key.Name)
	}
	desired := resources.Secret(m, data[appsv1alpha1.SecretKeyRootPassword], data[appsv1alpha1.SecretKeyPassword])
	return reconcile.ApplyChild(ctx, r.Client, m, key.Name, &corev1.Secret{}, desired, corev1ac.ExtractSecret)
}

// checkReferencedSecret reads a user's Secret from the API server: the cache holds only Secrets
// appkeeper manages. Nothing watches it, so a missing Secret is an error, retried with backoff.
func (r *Reconciler) checkReferencedSecret(ctx context.Context, m *appsv1alpha1.MySQL, name string) error {
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, secret); err != nil {
		return fmt.Errorf("spec.credentialsSecretRef: Secret %s/%s: %w", m.Namespace, name, err)
	}
	required := []string{appsv1alpha1.SecretKeyRootPassword}
	if m.Spec.User != "" {
		required = append(required, appsv1alpha1.SecretKeyPassword)
	}
	for _, key := range required {
		if len(secret.Data[key]) == 0 {
			return fmt.Errorf("spec.credentialsSecretRef: Secret %s/%s has no key %q", m.Namespace, name, key)
		}
	}
	return nil
}

func (r *Reconciler) reconcileServices(ctx context.Context, m *appsv1alpha1.MySQL) error {
	if err := reconcile.ApplyChild(ctx, r.Client, m, m.HeadlessServiceName(), &corev1.Service{}, resources.HeadlessService(m), corev1ac.ExtractService); err != nil {
		return err
	}
	return reconcile.ApplyChild(ctx, r.Client, m, m.ChildName(), &corev1.Service{}, resources.Service(m), corev1ac.ExtractService)
}

// reconcileStatefulSet applies the StatefulSet; seen.sts receives it as the API server has it.
func (r *Reconciler) reconcileStatefulSet(ctx context.Context, m *appsv1alpha1.MySQL, seen *observed) error {
	sts := &appsv1.StatefulSet{}
	result, before, err := reconcile.Apply(ctx, r.Client, client.ObjectKey{Namespace: m.Namespace, Name: m.ChildName()},
		sts, resources.StatefulSet(m), appsv1ac.ExtractStatefulSet)
	if err != nil {
		return fmt.Errorf("statefulset of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	seen.sts = sts
	switch {
	case result == reconcile.Created:
		r.Recorder.Eventf(m, sts, corev1.EventTypeNormal, appsv1alpha1.EventCreated, "Create",
			"created StatefulSet %s running %s", m.ChildName(), m.Spec.Image)
	case result == reconcile.Updated && resources.Image(before) != m.Spec.Image:
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, appsv1alpha1.EventUpgrading, "Upgrade",
			"rolling out %s, replacing %s", m.Spec.Image, resources.Image(before))
	}
	return nil
}

// claim is the data PVC as the cache has it, or nil.
func (r *Reconciler) claim(ctx context.Context, m *appsv1alpha1.MySQL) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.DataClaimName()}, pvc); err != nil {
		return nil
	}
	return pvc
}

// recordTransitions emits Upgraded when a rollout has just completed, and a warning when a
// downgrade is first refused.
func (r *Reconciler) recordTransitions(original, m *appsv1alpha1.MySQL) {
	if original.Status.Image != "" && m.Status.Image != original.Status.Image {
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, appsv1alpha1.EventUpgraded, "Upgrade", "the server runs %s", m.Status.Image)
	}
	if reason(m, appsv1alpha1.ConditionDegraded) == appsv1alpha1.ReasonDowngradeRefused &&
		reason(original, appsv1alpha1.ConditionDegraded) != appsv1alpha1.ReasonDowngradeRefused {
		r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, appsv1alpha1.ReasonDowngradeRefused, "Upgrade",
			"%s", conditionMessage(m, appsv1alpha1.ConditionDegraded))
	}
}

// generatePasswords makes the root and user passwords: 26 base32 characters from the system's
// secure random source, 130 bits each, with no character a shell or a connection string would
// treat specially.
func generatePasswords() map[string][]byte {
	return map[string][]byte{
		appsv1alpha1.SecretKeyRootPassword: []byte(rand.Text()),
		appsv1alpha1.SecretKeyPassword:     []byte(rand.Text()),
	}
}

// SetupWithManager registers the controller. It reacts to the MySQL's spec, to its children, and to
// its Secret and data PVC, which may have no owner reference to it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("mysql").
		For(&appsv1alpha1.MySQL{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Watches(&corev1.Secret{}, reconcile.EnqueueInstance(appsv1alpha1.MySQLAppName)).
		Watches(&corev1.PersistentVolumeClaim{}, reconcile.EnqueueInstance(appsv1alpha1.MySQLAppName)).
		WithOptions(options).
		Complete(r)
}
