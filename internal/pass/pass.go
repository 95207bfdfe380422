package pass

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/failure"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/rollout"
	"github.com/appkeeper/appkeeper/internal/statuspatch"
)

// Instance is an instance of one of the kinds that run pods: its status holds conditions and a
// rollout, which the pass reads and writes the same way for every kind.
type Instance interface {
	client.Object
	InstanceStatus() (status any, conditions []metav1.Condition, rollout appsv1alpha1.RolloutStatus)
}

// Pass is one reconcile of one instance: Run reads it, the kind's steps apply its children and
// observe them, and its end writes what they saw once.
type Pass[T Instance] struct {
	// Instance is the instance as read; the end of the pass replaces its status.
	Instance T
	// Original is a copy of it as read, which the status patch compares with.
	Original T
	// Desired is the revision of the pods the spec asks for; Decision is which revision the pass
	// applies and the rollout status it leaves. Until a step decides, the rollout stays as it was.
	Desired  rollout.Revision
	Decision rollout.Decision
	// Created collects the children the pass creates, reported in one Event at its end.
	Created Creations

	end      *End
	kind     string
	client   kube.Client
	recorder events.EventRecorder
}

// Run is the whole pass over the instance req names, read into obj: it begins (Read), runs the
// kind's steps, and finishes with what the steps registered with OnFinish. steps returns the
// result and error of the reconcile; the end sets the retry and the next check on them.
func Run[T Instance](ctx context.Context, c kube.Client, recorder events.EventRecorder, req ctrl.Request, obj T,
	steps func(context.Context, *Pass[T]) (ctrl.Result, error)) (result ctrl.Result, err error) {
	p, result, err := begin(ctx, c, recorder, req, obj)
	if p == nil {
		return result, err
	}
	defer p.finish(ctx, &result, &err)
	return steps(ctx, p)
}

// begin reads the instance req names into obj. It returns a nil Pass, with the result and error
// the reconcile returns, when there is nothing to do (Read).
func begin[T Instance](ctx context.Context, c kube.Client, recorder events.EventRecorder, req ctrl.Request, obj T) (*Pass[T], ctrl.Result, error) {
	if goOn, result, err := Read(ctx, c, req, obj, status); !goOn {
		return nil, result, err
	}
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	_, _, undecided := obj.InstanceStatus()
	return &Pass[T]{
		Instance: obj,
		Original: obj.DeepCopyObject().(T),
		Decision: rollout.Decision{Status: *undecided.DeepCopy()},
		kind:     gvk.Kind,
		client:   c,
		recorder: recorder,
	}, ctrl.Result{}, nil
}

// Read reads the object req names into obj and tells whether a pass goes on. It stops, with the
// result and error the reconcile returns, when the object is gone, or being deleted (owner
// references hand its children to the garbage collector, and what a kind keeps past a deletion
// carries no owner reference), or when the cache does not show yet the status the pass before
// wrote, which would make this pass decide again on stale status.
func Read[T client.Object](ctx context.Context, c client.Reader, req ctrl.Request, obj T, status func(T) any) (goOn bool, result ctrl.Result, err error) {
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		return false, ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return false, ctrl.Result{}, nil
	}
	if statuspatch.Behind(obj, status(obj)) {
		return false, ctrl.Result{RequeueAfter: statuspatch.CatchUp}, nil
	}
	return true, ctrl.Result{}, nil
}

// status is an instance's status, as the status patch compares and writes it.
func status[T Instance](obj T) any {
	s, _, _ := obj.InstanceStatus()
	return s
}

// conditionsOf is an instance's conditions.
func conditionsOf[T Instance](obj T) []metav1.Condition {
	_, c, _ := obj.InstanceStatus()
	return c
}

// End is what a kind tells the end of its pass of what the pass observed.
type End struct {
	// RolloutComplete tells whether the revision the pass applied runs on every replica, at
	// least one, all ready: evidence that the revision is good. The end asks only when the pass
	// ended without an error.
	RolloutComplete func() bool
	// Status sets the instance's status from what the pass observed, its decision and passErr,
	// the error the pass ended with, and records the Events of the change. It returns the error of
	// any read the status relied on: that leaves its conditions Unknown and is retried.
	Status func(passErr error) (readErr error)
}

// OnFinish registers end, which the steps call as soon as they have read what the status needs;
// a pass that ends before writes no status.
func (p *Pass[T]) OnFinish(end End) { p.end = &end }

// finish ends the pass: it reports what it created, completes the rollout, computes the status, warns when the instance
// turns Degraded, writes the status once if it changed, and sets the retry and the next check.
func (p *Pass[T]) finish(ctx context.Context, result *ctrl.Result, err *error) {
	p.Created.report(p.recorder, p.Instance)
	if p.end == nil {
		return
	}
	end := *p.end
	passErr := *err
	if passErr == nil && end.RolloutComplete() {
		p.Decision.Complete(p.Desired, time.Now())
	}
	readErr := end.Status(passErr)
	conditions.WarnWhenDegraded(ctx, p.recorder, p.Instance, conditionsOf(p.Original), conditionsOf(p.Instance))
	written := rollout.WriteStatus(ctx, p.client, p.recorder, p.kind, p.Original, p.Instance, p.Decision, status[T])
	// A pass waiting for a watched object to go needs no retry.
	*err = failure.DropWatchedWaits(errors.Join(passErr, readErr, written))
	if *err == nil {
		// The progress deadline of a rollout under way runs out with no event to tell of it.
		result.RequeueAfter = Earliest(result.RequeueAfter, p.Decision.Recheck)
	}
}

// Observed is obj once a step has read or applied it into obj, or nil while it does not exist or
// could not be read.
func Observed[T client.Object](obj T) T {
	var none T
	if obj.GetUID() == "" {
		return none
	}
	return obj
}

// Earliest is the sooner of two requeue delays, zero meaning none.
func Earliest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
