// Package memcached runs Memcacheds: it keeps each one's StatefulSet and headless Service as the
// spec says and reports in the status which members are ready to serve.
package memcached

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
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
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/failure"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/nodeloss"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/podmonitor"
	resources "github.com/appkeeper/appkeeper/internal/resources/memcached"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// Reconciler reconciles Memcacheds.
type Reconciler struct {
	Client   kube.Client
	Recorder events.EventRecorder
	// PodMonitors keeps a PodMonitor per monitored resource where prometheus-operator is installed.
	PodMonitors *podmonitor.Keeper

	wedged rollout.WedgedDeletions
}

// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=memcacheds,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=memcacheds/status,verbs=get;patch
// Owner references with blockOwnerDeletion need update on the owner's finalizers where the API
// server enforces OwnerReferencesPermissionEnforcement.
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the shared pass over the Memcached req names, with the steps of reconcile.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return pass.Run(ctx, r.Client, r.Recorder, req, &appsv1alpha1.Memcached{}, r.reconcile)
}

// reconcile applies the Memcached's children and writes its status once.
func (r *Reconciler) reconcile(ctx context.Context, p *pass.Pass[*appsv1alpha1.Memcached]) (_ ctrl.Result, err error) {
	mc := p.Instance
	pods, podsErr := r.listPods(ctx, mc)
	p.Desired = revision(mc)
	p.Decision = decide(mc, p.Desired, pods)
	// target is the Memcached as this pass builds it: the spec, or the last good members of a
	// rolled back one.
	target := mc.DeepCopy()
	sts := &appsv1.StatefulSet{}
	p.OnFinish(pass.End{
		RolloutComplete: func() bool { return target.DesiredSize() > 0 && rolloutComplete(target, pass.Observed(sts)) },
		Status: func(passErr error) error {
			lost, podsErr := nodeloss.Problems(ctx, r.Client, pods, podsErr)
			mc.Status = computeStatus(target, p.Decision, pass.Observed(sts), pods, lost, podsErr, passErr)
			// Pods that could not be read show no failure, leave the members last reported in
			// place and are read again on retry.
			return podsErr
		},
	})
	if target.Spec, err = rollout.Target(p.Decision, mc.Spec, podFields); err != nil {
		return ctrl.Result{}, err
	}

	if wait, err := apply.ClearLeftBehind(ctx, r.Client, mc.Namespace, mc.ChildName(), pods); wait > 0 || err != nil {
		return ctrl.Result{RequeueAfter: wait}, err
	}
	if err := pass.Concurrently(
		func() error { return r.reconcileStatefulSet(ctx, target, sts, &p.Created) },
		func() error { return r.reconcileService(ctx, target, &p.Created) },
		func() error {
			return disruption.Keep(ctx, r.Client, mc, mc.ChildName(), mc.SelectorLabels(), mc.DesiredSize(), &p.Created)
		},
		func() error {
			return r.PodMonitors.Reconcile(ctx, r.Client, mc, target.Spec.Monitoring.Enabled, mc.SelectorLabels())
		},
	); err != nil {
		return ctrl.Result{}, err
	}
	// A member on a lost node holds its name, and the StatefulSet makes it again nowhere, until it
	// is deleted with no grace period.
	left, lostRecheck, err := nodeloss.FreeFrom(ctx, r.Client, r.Recorder, mc, pods)
	freed := len(left) < len(pods)
	pods = left
	if err != nil || freed {
		return ctrl.Result{}, err
	}
	if replaced, err := r.replaceFailedMembers(ctx, mc, sts, pods, p.Decision); err != nil || replaced {
		// The members left wait for a pass that sees the deletion.
		return ctrl.Result{}, err
	}
	recheck, err := r.replaceWedgedMember(ctx, mc, sts, pods)
	return ctrl.Result{RequeueAfter: pass.Earliest(recheck, lostRecheck)}, err
}

func (r *Reconciler) reconcileService(ctx context.Context, mc *appsv1alpha1.Memcached, created *pass.Creations) error {
	svc := &corev1.Service{}
	result, _, err := apply.Child(ctx, r.Client, mc, mc.ChildName(),
		svc, resources.Service(mc), corev1ac.ExtractService)
	if err != nil {
		return fmt.Errorf("service of Memcached %s/%s: %w", mc.Namespace, mc.Name, err)
	}
	if result == apply.Created {
		created.Add(svc, "headless Service %s", mc.ChildName())
	}
	return nil
}

// reconcileStatefulSet applies the StatefulSet; sts receives it as the API server has it afterwards.
func (r *Reconciler) reconcileStatefulSet(ctx context.Context, mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, created *pass.Creations) error {
	if problem := resources.MemoryProblem(mc.Spec); problem != "" {
		// The members keep the last spec that could work.
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: mc.Namespace, Name: mc.ChildName()}, sts); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("statefulset of Memcached %s/%s: %w", mc.Namespace, mc.Name, err)
		}
		return &failure.InvalidSpecError{Message: problem}
	}
	result, before, err := apply.Child(ctx, r.Client, mc, mc.ChildName(),
		sts, resources.StatefulSet(mc), appsv1ac.ExtractStatefulSet)
	if err != nil {
		return fmt.Errorf("statefulset of Memcached %s/%s: %w", mc.Namespace, mc.Name, err)
	}
	switch {
	case result == apply.Created:
		created.Add(sts, "StatefulSet %s with %d members of %s", mc.ChildName(), mc.DesiredSize(), mc.Spec.Image)
	case result == apply.Updated && before.Spec.Replicas != nil && *before.Spec.Replicas != mc.DesiredSize():
		event.Scaled.Emit(r.Recorder, mc, nil,
			"scaled from %d to %d members", *before.Spec.Replicas, mc.DesiredSize())
	}
	return nil
}

// listPods reads the pods carrying mc's selector labels from the cache, which holds the pods of the
// StatefulSet because its template carries the managed-by label.
func (r *Reconciler) listPods(ctx context.Context, mc *appsv1alpha1.Memcached) ([]corev1.Pod, error) {
	pods, err := kube.ListPods(ctx, r.Client, mc.Namespace, mc.SelectorLabels())
	if err != nil {
		return nil, fmt.Errorf("pods of Memcached %s/%s: %w", mc.Namespace, mc.Name, err)
	}
	return pods, nil
}

// SetupWithManager registers the controller; it reacts to changes of a Memcached's spec, of its
// children and of its member pods, and never polls.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	// A child of another resource that held one of the names goes: take the name.
	freed := kube.EnqueueOnDeleteByChildName()
	ctl, err := ctrl.NewControllerManagedBy(mgr).
		Named("memcached").
		For(&appsv1alpha1.Memcached{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Watches(&appsv1.StatefulSet{}, freed).
		Watches(&corev1.Service{}, freed).
		Watches(&policyv1.PodDisruptionBudget{}, freed).
		// The StatefulSet, not the Memcached, owns the member pods: their labels make the link, so
		// that a member becoming ready or going away updates status.nodes.
		Watches(&corev1.Pod{}, kube.EnqueueInstance(appsv1alpha1.MemcachedAppName),
			builder.WithPredicates(conditions.PodStatusChangedPredicate)).
		WithOptions(options).
		Build(r.Client.SkipTerminatingNamespaces(&appsv1alpha1.Memcached{}, r))
	if err != nil {
		return err
	}
	return r.PodMonitors.Watch(ctl, &appsv1alpha1.Memcached{}, &appsv1alpha1.MemcachedList{})
}
