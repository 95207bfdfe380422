// Package webserver runs WebServers: it keeps each one's Deployment, Service and nginx ConfigMap as the spec says
// and reports what the pods do in the status.
package webserver

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/disruption"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/nodeloss"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/podmonitor"
	resources "github.com/appkeeper/appkeeper/internal/resources/webserver"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// Reconciler reconciles WebServers.
type Reconciler struct {
	Client   kube.Client
	Recorder events.EventRecorder
	// PodMonitors keeps a PodMonitor per monitored resource where prometheus-operator is installed.
	PodMonitors *podmonitor.Keeper
}

// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=webservers,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=webservers/status,verbs=get;patch
// Owner references with blockOwnerDeletion need update on the owner's finalizers where the API
// server enforces OwnerReferencesPermissionEnforcement.
// +kubebuilder:rbac:groups=apps.appkeeper.dev,resources=webservers/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the shared pass over the WebServer req names, with the steps of reconcile.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return pass.Run(ctx, r.Client, r.Recorder, req, &appsv1alpha1.WebServer{}, r.reconcile)
}

// reconcile applies the WebServer's children and writes its status once.
func (r *Reconciler) reconcile(ctx context.Context, p *pass.Pass[*appsv1alpha1.WebServer]) (_ ctrl.Result, err error) {
	ws := p.Instance
	pods, podsErr := kube.ListPods(ctx, r.Client, ws.Namespace, ws.SelectorLabels())
	p.Desired = revision(ws)
	p.Decision = rollout.Decide(rollout.Input{Policy: ws.Spec.Upgrade, Status: ws.Status.Rollout, Desired: p.Desired, Pods: pods, Now: time.Now()})
	// target is the WebServer as this pass builds it: the spec, or the last good pods of a rolled
	// back one.
	target := ws.DeepCopy()
	dep := &appsv1.Deployment{}
	p.OnFinish(pass.End{
		RolloutComplete: func() bool { return rolloutComplete(pass.Observed(dep), target) },
		Status: func(passErr error) error {
			lost, podsErr := nodeloss.Problems(ctx, r.Client, pods, podsErr)
			ws.Status = computeStatus(target, p.Decision, pass.Observed(dep), pods, lost, podsErr, passErr)
			r.recordUpgrade(p.Original, ws)
			return podsErr
		},
	})
	if podsErr != nil {
		return ctrl.Result{}, podsErr
	}
	if target.Spec, err = rollout.Target(p.Decision, ws.Spec, podFields); err != nil {
		return ctrl.Result{}, err
	}
	// A pod on a lost node would stay, unready, until its eviction five minutes later: gone, its
	// Deployment makes another at once.
	pods, recheck, err := nodeloss.FreeFrom(ctx, r.Client, r.Recorder, ws, pods)
	if err != nil {
		return ctrl.Result{}, err
	}

	// nginx's server block comes first: the pods mount it.
	if err := apply.Ensure(ctx, r.Client, ws, ws.ConfigMapName(), &corev1.ConfigMap{},
		resources.ConfigMap(target), corev1ac.ExtractConfigMap); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: recheck}, pass.Concurrently(
		func() error { return r.reconcileDeployment(ctx, target, dep, &p.Created) },
		func() error { return r.reconcileService(ctx, target, &p.Created) },
		func() error {
			return disruption.Keep(ctx, r.Client, ws, ws.ChildName(), ws.SelectorLabels(), ws.DesiredReplicas(), &p.Created)
		},
		func() error {
			return r.PodMonitors.Reconcile(ctx, r.Client, ws, target.Spec.Monitoring.Enabled, ws.SelectorLabels())
		},
	)
}

func (r *Reconciler) reconcileService(ctx context.Context, ws *appsv1alpha1.WebServer, created *pass.Creations) error {
	svc := &corev1.Service{}
	result, _, err := apply.Child(ctx, r.Client, ws, ws.ChildName(),
		svc, resources.Service(ws), corev1ac.ExtractService)
	if err != nil {
		return fmt.Errorf("service of WebServer %s/%s: %w", ws.Namespace, ws.Name, err)
	}
	if result == apply.Created {
		created.Add(svc, "Service %s", ws.ChildName())
	}
	return nil
}

// reconcileDeployment applies the Deployment; dep receives it as the API server has it afterwards.
func (r *Reconciler) reconcileDeployment(ctx context.Context, ws *appsv1alpha1.WebServer, dep *appsv1.Deployment, created *pass.Creations) error {
	result, before, err := apply.Child(ctx, r.Client, ws, ws.ChildName(),
		dep, resources.Deployment(ws), appsv1ac.ExtractDeployment)
	if err != nil {
		return fmt.Errorf("deployment of WebServer %s/%s: %w", ws.Namespace, ws.Name, err)
	}
	switch {
	case result == apply.Created:
		created.Add(dep, "Deployment %s with %d replicas of %s", ws.ChildName(), ws.DesiredReplicas(), ws.Spec.Image)
	case result == apply.Updated && before.Spec.Replicas != nil && *before.Spec.Replicas != ws.DesiredReplicas():
		event.Scaled.Emit(r.Recorder, ws, nil,
			"scaled from %d to %d replicas", *before.Spec.Replicas, ws.DesiredReplicas())
	}
	if result == apply.Updated && deploymentImage(before) != ws.Spec.Image {
		event.Upgrading.Emit(r.Recorder, ws, nil,
			"rolling out %s, replacing %s", ws.Spec.Image, deploymentImage(before))
	}
	return nil
}

// SetupWithManager registers the controller; it reacts to changes of a WebServer's spec and of any
// of its children, and never polls.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, options controller.Options) error {
	// A child of another resource that held one of the names goes: take the name.
	freed := kube.EnqueueOnDeleteByChildName()
	ctl, err := ctrl.NewControllerManagedBy(mgr).
		Named("webserver").
		For(&appsv1alpha1.WebServer{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Watches(&appsv1.Deployment{}, freed).
		Watches(&corev1.Service{}, freed).
		Watches(&corev1.ConfigMap{}, freed).
		Watches(&policyv1.PodDisruptionBudget{}, freed).
		// The ReplicaSets, not the WebServer, own the pods: their labels make the link, so that a
		// pod that cannot run shows in Degraded.
		Watches(&corev1.Pod{}, kube.EnqueueInstance((&appsv1alpha1.WebServer{}).SelectorLabels()[appsv1alpha1.LabelName]),
			builder.WithPredicates(conditions.PodStatusChangedPredicate)).
		WithOptions(options).
		Build(r.Client.SkipTerminatingNamespaces(&appsv1alpha1.WebServer{}, r))
	if err != nil {
		return err
	}
	return r.PodMonitors.Watch(ctl, &appsv1alpha1.WebServer{}, &appsv1alpha1.WebServerList{})
}
