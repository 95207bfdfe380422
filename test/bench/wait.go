package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/operator"
)

// readiness follows objects of one kind in one namespace through an informer and tells when a
// number of them are ready: a watch, so that waiting adds no load that polling would.
type readiness struct {
	mu      sync.Mutex
	ready   map[string]bool
	changed chan struct{}
	cancel  context.CancelFunc
}

// watchReady starts following objects like sample in ns; isReady decides for each object.
func watchReady(ctx context.Context, cfg *rest.Config, ns string, sample client.Object, isReady func(client.Object) bool) (*readiness, error) {
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
	r := &readiness{ready: map[string]bool{}, changed: make(chan struct{}, 1), cancel: cancel}
	update := func(obj any) {
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		r.set(o.GetName(), o.GetDeletionTimestamp() == nil && isReady(o))
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    update,
		UpdateFunc: func(_, obj any) { update(obj) },
		DeleteFunc: func(obj any) {
			if o, ok := obj.(client.Object); ok {
				r.set(o.GetName(), false)
			} else if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				if o, ok := d.Obj.(client.Object); ok {
					r.set(o.GetName(), false)
				}
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

func (r *readiness) set(name string, ready bool) {
	r.mu.Lock()
	if ready {
		r.ready[name] = true
	} else {
		delete(r.ready, name)
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// waitCount waits until at least n objects are ready.
func (r *readiness) waitCount(ctx context.Context, n int, timeout time.Duration) error {
	return r.waitFor(ctx, timeout, func() bool { return len(r.ready) >= n }, func() string {
		return fmt.Sprintf("%d of %d ready", len(r.ready), n)
	})
}

// waitName waits until the object named name is ready.
func (r *readiness) waitName(ctx context.Context, name string, timeout time.Duration) error {
	return r.waitFor(ctx, timeout, func() bool { return r.ready[name] }, func() string { return name + " not ready" })
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
