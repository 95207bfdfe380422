package apiserverwait

import (
	"time"
)

// episode is one stretch of failed calls, from the first failure until the API server is found
// ready: by a probe, or by a call that succeeds.
type episode struct {
	cause   error
	started time.Time
	// prober holds a token while one of the waiting calls probes, so that only one does.
	prober chan struct{}
	// decided is closed once a probe has told whether the API server is away, and away is set
	// before; over is closed once it is ready.
	decided, over chan struct{}
	away          bool
	// informers are those whose calls failed, counted once each however often they failed.
	informers map[any]struct{}
}

// join adds informer's failed call to the current episode, or starts one.
func (o *Outage) join(informer any, cause error) *episode {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.current == nil {
		o.current = &episode{
			cause: cause, started: time.Now(), prober: make(chan struct{}, 1),
			decided: make(chan struct{}), over: make(chan struct{}), informers: map[any]struct{}{},
		}
	}
	o.current.informers[informer] = struct{}{}
	return o.current
}

// lose records that a probe found the API server away; the first such probe logs it.
func (o *Outage) lose(ep *episode, readyz error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ep.away || o.current != ep {
		return
	}
	ep.away = true
	close(ep.decided)
	o.log.Info("lost the API server: informers wait for it to be ready",
		"error", ep.cause.Error(), "readyz", readyz.Error())
}

// end closes ep: the API server is ready, and every call waiting in ep is released.
func (o *Outage) end(ep *episode) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.current != ep {
		return
	}
	o.current = nil
	if ep.away {
		o.log.Info("API server is back", "outage", time.Since(ep.started).Round(time.Millisecond).String(),
			"informers", len(ep.informers))
	} else {
		close(ep.decided)
	}
	close(ep.over)
}
