package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// floor times a plain client creating the children of n instances of k, then the same client
// doing by hand what a self-heal asks of the operator (see floorHeal).
func (b *bench) floor(ctx context.Context, k benchKind, n int, r *result) error {
	ns := fmt.Sprintf("floor-%s-%d", strings.ToLower(k.name), n)
	if err := b.createNamespace(ctx, ns); err != nil {
		return err
	}
	defer func() { _ = b.deleteNamespace(ctx, ns) }()
	objects, err := b.floorChildren(ctx, k, n, ns)
	if err != nil {
		return err
	}
	// Create fills the objects in; the self-heal rounds create the children again from these.
	pristine := make([]client.Object, min(b.o.selfHeals, n))
	for i := range pristine {
		pristine[i] = primaryOf(k, objects[i])
	}
	ready, err := watchReady(ctx, b.cluster.Config, ns, k.primary(), k.primaryReady)
	if err != nil {
		return err
	}
	defer ready.stop()
	start := time.Now()
	if err := b.createChildren(ctx, k, ns, objects); err != nil {
		return err
	}
	r.Timeline.FloorChildrenCreatedS = round2(time.Since(start).Seconds())
	if err := ready.waitCount(ctx, n, convergeTimeout); err != nil {
		return err
	}
	r.FloorS = time.Since(start).Seconds()
	times, err := b.floorHeal(ctx, ready, pristine)
	if err != nil {
		return fmt.Errorf("self-heal floor: %w", err)
	}
	r.FloorSingleMS, r.FloorSingleP99MS = percentileMS(times, 0.50), percentileMS(times, 0.99)
	return nil
}

// floorChildren builds the children of n instances of k in ns, before the clock starts. They are
// built from the defaulted resources, which a dry run gives without storing them.
func (b *bench) floorChildren(ctx context.Context, k benchKind, n int, ns string) ([][]client.Object, error) {
	defaulted := func(obj client.Object) error { return b.c.Create(ctx, obj, client.DryRunAll) }
	objects := make([][]client.Object, n)
	err := parallel(n, func(i int) error {
		cr := k.newCR(ns, instanceName(k, i))
		if err := defaulted(cr); err != nil {
			return err
		}
		typed := k.typed()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cr.Object, typed); err != nil {
			return err
		}
		var err error
		objects[i], err = k.children(typed, defaulted)
		return err
	})
	return objects, err
}

// createChildren creates the children of every instance in order, and those k's gate holds back
// once their instance's gate child is ready. The held ones are created as the gate children turn
// ready, by the watch that sees them, not by workers that wait: the operator's reconciles do not
// wait either, and a waiting worker would hold back the instances behind it.
func (b *bench) createChildren(ctx context.Context, k benchKind, ns string, objects [][]client.Object) error {
	first := make([][]client.Object, len(objects))
	held := map[string][]client.Object{}
	for i, children := range objects {
		for _, obj := range children {
			if k.gate != nil && k.gate.holds(obj) {
				name := k.gate.name(instanceName(k, i))
				held[name] = append(held[name], obj)
			} else {
				first[i] = append(first[i], obj)
			}
		}
	}
	var released *release
	if len(held) > 0 {
		var err error
		if released, err = b.releaseWhenReady(ctx, ns, k.gate, held); err != nil {
			return err
		}
		defer released.watch.stop()
	}
	if err := parallel(len(first), func(i int) error { return b.createAll(ctx, first[i]) }); err != nil {
		return err
	}
	if released == nil {
		return nil
	}
	return released.wait(ctx, convergeTimeout)
}

func (b *bench) createAll(ctx context.Context, objects []client.Object) error {
	for _, obj := range objects {
		if err := b.c.Create(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// release creates held children once the gate child they wait for is ready.
type release struct {
	watch *readiness
	// done receives the outcome of each group of held children.
	done   chan error
	groups int
}

// releaseWhenReady starts watching the gate children of g in ns and, as each turns ready, creates
// the children held under its name, at most workers groups at a time, like the floor's other
// creates.
func (b *bench) releaseWhenReady(ctx context.Context, ns string, g *gate, held map[string][]client.Object) (*release, error) {
	var mu sync.Mutex
	slots := make(chan struct{}, workers)
	r := &release{done: make(chan error, len(held)), groups: len(held)}
	then := func(name string) {
		mu.Lock()
		objects, ok := held[name]
		delete(held, name)
		mu.Unlock()
		if !ok {
			return
		}
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			r.done <- b.createAll(ctx, objects)
		}()
	}
	var err error
	r.watch, err = watchReadyThen(ctx, b.cluster.Config, ns, g.sample(), g.ready, then)
	return r, err
}

// wait waits until every group of held children is created, and returns the first error.
func (r *release) wait(ctx context.Context, timeout time.Duration) error {
	deadline := time.After(timeout)
	for created := range r.groups {
		select {
		case err := <-r.done:
			if err != nil {
				return err
			}
		case <-deadline:
			return fmt.Errorf("timed out after %s: %d of %d instances' held children created", timeout, created, r.groups)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// floorHeal times a plain client doing what a self-heal asks of the operator, one instance at a
// time: delete the main child, see it gone, create it again and wait until it is ready. It is the
// fastest any client can put a deleted child back on this cluster, waits and all.
func (b *bench) floorHeal(ctx context.Context, ready *readiness, children []client.Object) ([]time.Duration, error) {
	times := make([]time.Duration, 0, len(children))
	for _, child := range children {
		name := child.GetName()
		if err := ready.waitName(ctx, name, healTimeout); err != nil {
			return nil, err
		}
		uid := ready.uid(name)
		start := time.Now()
		if err := b.c.Delete(ctx, child.DeepCopyObject().(client.Object)); err != nil {
			return nil, err
		}
		if err := ready.waitGone(ctx, name, uid, healTimeout); err != nil {
			return nil, err
		}
		// Like a controller, the client creates the child again whenever it disappears: kwok, which
		// deletes pods by name, can take a pod created under the name of one it just deleted.
		for {
			obj := child.DeepCopyObject().(client.Object)
			if err := b.c.Create(ctx, obj); err != nil {
				return nil, err
			}
			gone, err := ready.waitReadyOrGone(ctx, name, obj.GetUID(), healTimeout)
			if err != nil {
				return nil, err
			}
			if !gone {
				break
			}
		}
		times = append(times, time.Since(start))
	}
	return times, nil
}

// primaryOf picks the main child out of an instance's children, as a copy.
func primaryOf(k benchKind, children []client.Object) client.Object {
	want := fmt.Sprintf("%T", k.primary())
	for _, obj := range children {
		if fmt.Sprintf("%T", obj) == want {
			return obj.DeepCopyObject().(client.Object)
		}
	}
	panic(fmt.Sprintf("%s has no child of type %s", k.name, want))
}
