// Package apiserverwait keeps a manager's informers from backing off while the API server is away.
//
// A client-go Reflector waits longer after each failed List or Watch (0.8 s doubling to 30 s, with
// jitter, reset only after two minutes), so once an API server that was down for a few seconds is
// back, an informer may sleep for tens of seconds more before it sees a change, and longer after
// each outage. Here a failed call first asks the API server whether it is ready. If it is not, a
// List waits until it is and is then repeated, so the Reflector never sees the error and never
// backs off for it; a watch that the outage broke ends as expired at once, so that the Reflector
// lists again, which a restarted API server demands anyway, as soon as it is back. An error from a
// ready API server (Forbidden, Gone, ...) reaches the Reflector unchanged.
package apiserverwait

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

const (
	// probeInterval is how soon after it is ready again the waiting calls learn of it.
	probeInterval = 250 * time.Millisecond
	// probeTimeout bounds a probe of an API server that accepts connections but does not answer.
	probeTimeout = time.Second
)

// Outage is shared by every informer of a manager: while the API server is away, one of the calls
// waiting for it probes its readiness, and every waiting call is released at once when it is back.
// The outage is logged once when it starts and once when it ends, whatever the number of informers.
type Outage struct {
	ready func(context.Context) error
	log   logr.Logger

	mu      sync.Mutex
	current *episode
}

// Every cluster lets every user read /readyz; the operator asks for it all the same, so that a
// cluster that withholds it does not leave its informers waiting for ever.
// +kubebuilder:rbac:urls=/readyz,verbs=get

// New returns the Outage of the API server that cfg reaches: readiness is its /readyz endpoint,
// asked with cfg's credentials.
func New(cfg *rest.Config, log logr.Logger) (*Outage, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = probeTimeout
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("create the client of the API server's readiness: %w", err)
	}
	// A starting API server refuses requests until its authorizer has synced: a refusal of /readyz
	// is not readiness. The next probe is the retry.
	readyz := func(ctx context.Context) error {
		return client.Get().AbsPath("/readyz").MaxRetries(0).Do(ctx).Error()
	}
	return &Outage{ready: readyz, log: log}, nil
}

// waitOut is called by informer with the error of a failed call. It returns true, once the API
// server is ready again, when the call failed because the API server was away and is worth
// repeating; false at once when the API server is ready (the error is the server's answer), or
// when ctx ends.
func (o *Outage) waitOut(ctx context.Context, informer any, cause error) bool {
	ep := o.join(informer, cause)
	return o.await(ctx, ep, ep.over) && ep.away
}

// isAway is called by informer with the error of a failed call. It returns as soon as a probe
// tells whether the API server is away, and true if it is.
func (o *Outage) isAway(ctx context.Context, informer any, cause error) bool {
	ep := o.join(informer, cause)
	return o.await(ctx, ep, ep.decided) && ep.away
}

// reached is called when a call that started at start succeeded: an outage that began before it
// is over, even if no call was left waiting to see it end.
func (o *Outage) reached(start time.Time) {
	o.mu.Lock()
	ep := o.current
	o.mu.Unlock()
	if ep != nil && ep.started.Before(start) {
		o.end(ep)
	}
}

// await returns true once until is closed, probing while no other caller does; false when ctx
// ends first.
func (o *Outage) await(ctx context.Context, ep *episode, until <-chan struct{}) bool {
	for {
		select {
		case <-until:
			return true
		case <-ctx.Done():
			return false
		case ep.prober <- struct{}{}:
			o.probe(ctx, ep, until)
			<-ep.prober
		}
	}
}

// probe asks for readiness until the API server is ready, which ends the episode, until until
// is closed, or until ctx ends, when another waiting call may take over.
func (o *Outage) probe(ctx context.Context, ep *episode, until <-chan struct{}) {
	for {
		select {
		case <-until:
			return
		default:
		}
		probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
		err := o.ready(probeCtx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			o.end(ep)
			return
		}
		o.lose(ep, err)
		select {
		case <-ctx.Done():
			return
		case <-until:
			return
		case <-time.After(probeInterval):
		}
	}
}
