package apiserverwait

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// NewInformer builds an informer as client-go would, over a ListerWatcher whose calls wait out the
// API server's outages. It fits controller-runtime's cache.Options.NewInformer.
func (o *Outage) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration,
	indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return toolscache.NewSharedIndexInformer(o.ListerWatcher(lw), obj, resync, indexers)
}

// ListerWatcher returns lw with its calls waiting out the API server's outages: a call that fails
// while the API server is not ready waits until it is and is then repeated, and a watch that an
// outage breaks ends as expired. A wait ends when the caller's context does.
func (o *Outage) ListerWatcher(lw toolscache.ListerWatcher) *ListerWatcher {
	return &ListerWatcher{next: toolscache.ToListerWatcherWithContext(lw), semantics: lw, outage: o}
}

// ListerWatcher is a cache.ListerWatcherWithContext that waits out the API server's outages.
type ListerWatcher struct {
	next toolscache.ListerWatcherWithContext
	// semantics is the ListerWatcher as given, which may tell the Reflector what it supports.
	semantics toolscache.ListerWatcher
	outage    *Outage
}

var _ toolscache.ListerWatcherWithContext = &ListerWatcher{}

// ListWithContext lists, waiting out an outage.
func (lw *ListerWatcher) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return retryAcrossOutage(ctx, lw, func() (runtime.Object, error) { return lw.next.ListWithContext(ctx, opts) })
}

// WatchWithContext starts a watch, waiting out an outage. The watch ends as expired when an outage
// breaks it.
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := retryAcrossOutage(ctx, lw, func() (watch.Interface, error) { return lw.next.WatchWithContext(ctx, opts) })
	if err != nil {
		return nil, err
	}
	return lw.expireOnOutage(ctx, w), nil
}

// List is the Lister of callers that know no context; the wait is then unbounded.
//
// Deprecated: use ListWithContext.
func (lw *ListerWatcher) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

// Watch is the Watcher of callers that know no context; the wait is then unbounded.
//
// Deprecated: use WatchWithContext.
func (lw *ListerWatcher) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported passes on what the wrapped ListerWatcher tells the Reflector
// about streaming lists, so that wrapping changes nothing of how the Reflector lists.
func (lw *ListerWatcher) IsWatchListSemanticsUnSupported() bool {
	s, ok := lw.semantics.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && s.IsWatchListSemanticsUnSupported()
}

func retryAcrossOutage[T any](ctx context.Context, lw *ListerWatcher, call func() (T, error)) (T, error) {
	for {
		start := time.Now()
		result, err := call()
		if err == nil {
			lw.outage.reached(start)
			return result, nil
		}
		if ctx.Err() != nil || !lw.outage.waitOut(ctx, lw, err) {
			return result, err
		}
	}
}
