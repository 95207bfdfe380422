package apiserverwait

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// errWatchEnded is the cause of an outage first seen as a watch stream that ended.
var errWatchEnded = errors.New("the watch stream ended")

// expiredByOutage ends a watch that an outage broke. The Reflector then lists again after its
// backoff, which passes while the API server is still away, and the List waits for it; a Reflector
// that resumed its watch instead would be told by the restarted API server that its resource
// version is too old, and only then back off and list.
func expiredByOutage() watch.Event {
	err := apierrors.NewResourceExpired("the API server went away: list again once it is back")
	return watch.Event{Type: watch.Error, Object: &err.ErrStatus}
}

// outageWatch passes on the events of a watch, but ends it as expired when its stream breaks
// because the API server went away.
type outageWatch struct {
	next   watch.Interface
	lw     *ListerWatcher
	result chan watch.Event
	ctx    context.Context
	stop   context.CancelFunc
}

func (lw *ListerWatcher) expireOnOutage(ctx context.Context, next watch.Interface) watch.Interface {
	ctx, stop := context.WithCancel(ctx)
	w := &outageWatch{next: next, lw: lw, result: make(chan watch.Event), ctx: ctx, stop: stop}
	go w.pass()
	return w
}

// Stop ends the watch and, through pass, the one it passes on.
func (w *outageWatch) Stop() { w.stop() }

// ResultChan is the events of the watch passed on.
func (w *outageWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *outageWatch) pass() {
	defer close(w.result)
	defer w.next.Stop()
	for {
		var e watch.Event
		var open bool
		select {
		case <-w.ctx.Done():
			return
		case e, open = <-w.next.ResultChan():
		}
		switch {
		case !open:
			if w.lw.outage.isAway(w.ctx, w.lw, errWatchEnded) {
				w.send(expiredByOutage())
			}
			// A watch that ends with the API server ready (its timeout, say) ends as it would have.
			return
		case e.Type == watch.Error && w.lw.outage.isAway(w.ctx, w.lw, apierrors.FromObject(e.Object)):
			w.send(expiredByOutage())
			return
		}
		if !w.send(e) {
			return
		}
	}
}

func (w *outageWatch) send(e watch.Event) bool {
	select {
	case <-w.ctx.Done():
		return false
	case w.result <- e:
		return true
	}
}
