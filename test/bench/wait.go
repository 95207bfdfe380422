package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/operator"
)

// readiness follows objects of one kind in one namespace through an informer and tells when a
// number of them are ready: a watch, so that waiting adds no load that polling would.
type readiness struct {
	mu sync.Mutex
	// present maps the name of every object that exists to its UID; ready holds the names of the
	// ready ones. A recreated object has a new UID, which tells it from the one it replaces even
	// when the deletion and the re-creation arrive between two looks.
	present map[string]types.UID
	ready   map[string]bool
	// gone holds the UIDs of the objects seen deleted.
	gone    map[types.UID]bool
	changed chan struct{}
	cancel  context.CancelFunc
	// then, when set, is called with the name of each object that turns ready.
	then func(name string)
}

// watchReady starts following objects like sample in ns; isReady decides for each object.
func watchReady(ctx context.Context, cfg *rest.Config, ns string, sample client.Object, isReady func(client.Object) bool) (*readiness, error) {
	return watchReadyThen(ctx, cfg, ns, sample, isReady, nil)
}

// watchReadyThen is watchReady that also calls then, when not nil, with the name of each object
// that turns ready. then runs on the informer's goroutine and must not block: every wait on this
// readiness would stall behind it.
func watchReadyThen(ctx context.Context, cfg *rest.Config, ns string, sample client.Object, isReady func(client.Object) bool, then func(name string)) (*readiness, error) {
	ctx, cancel := context.WithCancel(ctx)
	c, err := cache.New(cfg, cache.Options{Scheme: operator.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		cancel()
		return nil, err
	}
	inf, err := c.GetInformer(ctx, sample)
	if err != nil {
		cancel()
		return nil, err
	}
	r := &readiness{present: map[string]types.UID{}, ready: map[string]bool{}, gone: map[types.UID]bool{},
		changed: make(chan struct{}, 1), cancel: cancel, then: then}
	update := func(obj any) {
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		r.set(o.GetName(), o.GetUID(), o.GetDeletionTimestamp() == nil && isReady(o))
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    update,
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if o, ok := obj.(client.Object); ok {
				r.remove(o.GetName(), o.GetUID())
			}
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("cache of %T in %s did not sync", sample, ns)
	}
	return r, nil
}

func (r *readiness) set(name string, uid types.UID, ready bool) {
	r.mu.Lock()
	r.present[name] = uid
	turned := ready && !r.ready[name]
	if ready {
		r.ready[name] = true
	} else {
		delete(r.ready, name)
	}
	r.mu.Unlock()
	r.notify()
	if turned && r.then != nil {
		r.then(name)
	}
}

func (r *readiness) remove(name string, uid types.UID) {
	r.mu.Lock()
	r.gone[uid] = true
	if r.present[name] == uid {
		delete(r.present, name)
		delete(r.ready, name)
	}
	r.mu.Unlock()
	r.notify()
}

func (r *readiness) notify() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// uid is the UID of the object named name, empty when it does not exist.
func (r *readiness) uid(name string) types.UID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.present[name]
}

// waitCount waits until at least n objects are ready.
func (r *readiness) waitCount(ctx context.Context, n int, timeout time.Duration) error {
	return r.waitFor(ctx, timeout, func() bool { return len(r.ready) >= n }, func() string {
		return fmt.Sprintf("%d of %d ready", len(r.ready), n)
	})
}

// waitPresent waits until at least n objects exist, ready or not.
func (r *readiness) waitPresent(ctx context.Context, n int, timeout time.Duration) error {
	return r.waitFor(ctx, timeout, func() bool { return len(r.present) >= n }, func() string {
		return fmt.Sprintf("%d of %d exist", len(r.present), n)
	})
}

// milestone runs wait in the background and returns a function that gives the seconds from start
// to when wait returned, or -1 when it failed.
func milestone(start time.Time, wait func() error) func() float64 {
	seconds := make(chan float64, 1)
	go func() {
		if wait() != nil {
			seconds <- -1
			return
		}
		seconds <- round2(time.Since(start).Seconds())
	}()
	return func() float64 { return <-seconds }
}

// waitName waits until the object named name is ready.
func (r *readiness) waitName(ctx context.Context, name string, timeout time.Duration) error {
	return r.waitFor(ctx, timeout, func() bool { return r.ready[name] }, func() string { return name + " not ready" })
}

// waitGone waits until the object named name with the given UID no longer exists.
func (r *readiness) waitGone(ctx context.Context, name string, uid types.UID, timeout time.Duration) error {
	return r.waitFor(ctx, timeout, func() bool { return r.present[name] != uid }, func() string { return name + " not deleted" })
}

// waitReplaced waits until an object named name other than the one with the given UID is ready.
func (r *readiness) waitReplaced(ctx context.Context, name string, uid types.UID, timeout time.Duration) error {
	return r.waitFor(ctx, timeout, func() bool { return r.ready[name] && r.present[name] != uid }, func() string {
		return name + " not back and ready"
	})
}

// waitReadyOrGone waits until the object with the given UID is ready, and tells whether it was
// deleted instead.
func (r *readiness) waitReadyOrGone(ctx context.Context, name string, uid types.UID, timeout time.Duration) (gone bool, err error) {
	err = r.waitFor(ctx, timeout, func() bool {
		gone = r.gone[uid]
		return gone || (r.ready[name] && r.present[name] == uid)
	}, func() string { return name + " not ready" })
	return gone, err
}

func (r *readiness) waitFor(ctx context.Context, timeout time.Duration, done func() bool, describe func() string) error {
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		ok := done()
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-r.changed:
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			return fmt.Errorf("timed out after %s: %s", timeout, describe())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *readiness) stop() { r.cancel() }
