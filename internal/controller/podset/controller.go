// Package podset runs PodSets: it keeps spec.replicas bare pods of the current template, owned by
// the PodSet, replacing pods of an older template maxUnavailable at a time. A template whose pods
// fail is rolled back to the last one whose pods were all ready, the same way.
package podset

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/disruption"
	"github.com/appkeeper/appkeeper/internal/failure"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/nodeloss"
	"github.com/appkeeper/appkeeper/internal/pass"
	resources "github.com/appkeeper/appkeeper/internal/resources/podset"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// Reconciler reconciles PodSets.
type Reconciler struct {
	// Client reads past the cache through its APIReader, which tells a pod this PodSet created
	// moments ago, which the cache has not seen yet, from a pod that somebody else holds under a
	// wanted name.
	Client   kube.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=podsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=podsets/status,verbs=get;patch
// Owner references with blockOwnerDeletion need update on the owner's finalizers where the API
// server enforces OwnerReferencesPermissionEnforcement.
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=podsets/finalizers,verbs=update
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the shared pass over the PodSet req names, with the steps of reconcile.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return pass.Run(ctx, r.Client, r.Recorder, req, &appsv1alpha1.PodSet{}, r.reconcile)
}

// reconcile creates and deletes the pods as planPods decides, from the spec's template or, while
// the spec's revision is rolled back, the last good one, and writes its status once.
func (r *Reconciler) reconcile(ctx context.Context, p *pass.Pass[*appsv1alpha1.PodSet]) (_ ctrl.Result, err error) {
	ps := p.Instance
	pods, podsErr := kube.ListPods(ctx, r.Client, ps.Namespace, ps.SelectorLabels())
	p.Desired = revision(ps)
	p.Decision = decide(ps, p.Desired, pods, podsErr)
	// target is the PodSet as this pass builds its pods: the spec, or the last good template of a
	// rolled back one; hash is the hash of its template.
	target, hash := ps.DeepCopy(), p.Desired.Name
	p.OnFinish(pass.End{
		RolloutComplete: func() bool { return rolloutComplete(target, hash, pods) },
		Status: func(passErr error) error {
			lost, readErr := nodeloss.Problems(ctx, r.Client, pods, podsErr)
			ps.Status = computeStatus(target, hash, p.Decision, pods, lost, readErr, passErr)
			r.recordUpgrade(p.Original, ps)
			// A pass that could not read the pods ends with that error.
			return nil
		},
	})

	if podsErr != nil {
		return ctrl.Result{}, fmt.Errorf("list pods of PodSet %s/%s: %w", ps.Namespace, ps.Name, podsErr)
	}
	// A pod on a lost node holds its name until it is deleted with no grace period.
	pods, recheck, err := nodeloss.FreeFrom(ctx, r.Client, r.Recorder, ps, pods)
	if err != nil {
		return ctrl.Result{}, err
	}
	if target.Spec, err = rollout.Target(p.Decision, ps.Spec, podFields); err != nil {
		return ctrl.Result{}, err
	}
	hash = resources.TemplateHash(&target.Spec.Template)
	planned := planPods(target, hash, pods)
	if planned.replacesStale() {
		// The maxUnavailable budget must count the pods as they are: a cache that has not yet
		// seen the pod a previous pass deleted would let this pass delete one more.
		fresh := &corev1.PodList{}
		if err := r.Client.APIReader.List(ctx, fresh, client.InNamespace(ps.Namespace), client.MatchingLabels(ps.SelectorLabels())); err != nil {
			return ctrl.Result{}, fmt.Errorf("list pods of PodSet %s/%s: %w", ps.Namespace, ps.Name, err)
		}
		pods = fresh.Items
		planned = planPods(target, hash, pods)
	}
	if err := disruption.Keep(ctx, r.Client, ps, ps.Name, ps.SelectorLabels(), ps.DesiredReplicas(), &p.Created); err != nil {
		return ctrl.Result{}, err
	}
	r.recordScale(p.Original)
	pods, err = r.execute(ctx, target, hash, p.Decision, pods, planned)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("pods of PodSet %s/%s: %w", ps.Namespace, ps.Name, err)
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// execute carries out p and returns the pods as they stand afterwards: those observed, minus the
// ones deleted, plus the ones created. It stops at the first error.
func (r *Reconciler) execute(ctx context.Context, ps *appsv1alpha1.PodSet, hash string, decision rollout.Decision, pods []corev1.Pod, p plan) ([]corev1.Pod, error) {
	deleted := map[types.UID]bool{}
	var err error
	for _, d := range p.delete {
		if err = r.deletePod(ctx, d.pod); err != nil {
			break
		}
		deleted[d.pod.UID] = true
	}
	after := make([]corev1.Pod, 0, len(pods)+len(p.create))
	for i := range pods {
		if !deleted[pods[i].UID] {
			after = append(after, pods[i])
		}
	}
	r.recordDeletions(ps, decision, p.delete, deleted)
	if err != nil {
		return after, err
	}
	created, taken, err := r.createPods(ctx, ps, hash, p.create)
	after = append(after, created...)
	if err != nil {
		return after, err
	}
	if taken = append(p.taken, taken...); len(taken) > 0 {
		return after, &failure.NameConflictError{Kind: "Pod", Name: strings.Join(taken, ", "), Owner: "PodSet " + ps.Name}
	}
	return after, nil
}

// deletePod deletes pod, and only that pod: the name of a pod deleted earlier may already belong to
// its replacement, which a cache that lags behind does not show yet.
func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	if _, err := apply.DeleteExactly(ctx, r.Client, pod); err != nil {
		return fmt.Errorf("delete pod %s: %w", pod.Name, err)
	}
	return nil
}

// createPods creates the pods at ordinals, all in this pass, in batches that double from one as
// long as every create succeeds: the pods go out together, while a create that fails (a quota, a
// webhook) fails once rather than once per pod. A name that exists already is either a pod the
// cache has not shown yet, which is returned with the created ones, or a pod the PodSet does not
// control, whose name is returned in taken.
func (r *Reconciler) createPods(ctx context.Context, ps *appsv1alpha1.PodSet, hash string, ordinals []int) (created []corev1.Pod, taken []string, err error) {
	outcomes := make([]podCreation, len(ordinals))
	for done, batch := 0, 1; done < len(ordinals) && err == nil; done, batch = done+batch, batch*2 {
		fns := make([]func() error, 0, batch)
		for i := done; i < min(done+batch, len(ordinals)); i++ {
			fns = append(fns, func() error {
				outcomes[i] = r.createPod(ctx, ps, resources.Pod(ps, ordinals[i], hash))
				return outcomes[i].err
			})
		}
		err = pass.Concurrently(fns...)
	}
	var names []string
	for _, o := range outcomes {
		switch {
		case o.taken:
			taken = append(taken, o.pod.Name)
		case o.pod != nil && o.err == nil:
			created = append(created, *o.pod)
			if o.new {
				names = append(names, o.pod.Name)
			}
		}
	}
	r.recordCreations(ps, names)
	return created, taken, err
}

// podCreation is what became of one pod to create: pod is the pod as the API server has it, or nil
// when it was not created; new tells whether this pass created it, taken whether its name belongs
// to a pod the PodSet does not control.
type podCreation struct {
	pod   *corev1.Pod
	new   bool
	taken bool
	err   error
}

func (r *Reconciler) createPod(ctx context.Context, ps *appsv1alpha1.PodSet, pod *corev1.Pod) podCreation {
	err := r.Client.Create(ctx, pod, client.FieldOwner(r.Client.FieldOwner))
	if err == nil {
		return podCreation{pod: pod, new: true}
	}
	if !apierrors.IsAlreadyExists(err) {
		return podCreation{err: fmt.Errorf("create pod %s: %w", pod.Name, err)}
	}
	err = r.Client.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), pod)
	switch {
	case apierrors.IsNotFound(err):
		return podCreation{}
	case err != nil:
		return podCreation{err: fmt.Errorf("create pod %s: %w", pod.Name, err)}
	case metav1.IsControlledBy(pod, ps):
		return podCreation{pod: pod}
	}
	return podCreation{pod: pod, taken: true}
}

// SetupWithManager registers the controller; it reacts to changes of a PodSet's spec and to every
// change of its pods, and never polls.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("podset").
		For(&appsv1alpha1.PodSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.Pod{}, builder.WithPredicates(conditions.PodStatusChangedPredicate)).
		Owns(&policyv1.PodDisruptionBudget{}).
		// A budget of another resource that held the name goes: take the name.
		Watches(&policyv1.PodDisruptionBudget{}, kube.EnqueueOnDeleteByChildName()).
		WithOptions(options).
		Complete(r.Client.SkipTerminatingNamespaces(&appsv1alpha1.PodSet{}, r))
}
