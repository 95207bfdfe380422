package podmonitor

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// Keeper keeps the PodMonitor of each resource whose spec.monitoring is enabled while the
// cluster serves prometheus-operator's PodMonitor kind, which comes and goes with
// prometheus-operator, in any order with appkeeper. Whoever follows the kind calls Serve when it
// appears and Drop when it goes. A nil Keeper does nothing.
type Keeper struct {
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	// resources reads the monitored resources, to give each a pass when the kind appears.
	resources client.Reader

	// settled is closed once the operator knows whether the kind is served at start, and, if so,
	// holds its PodMonitors: until then a pass waits rather than act as if there were none.
	settled    chan struct{}
	settleOnce sync.Once

	mu          sync.Mutex
	podMonitors cache.Cache // nil while the kind is not served
	controllers []monitoringController
}

// monitoringController is the controller of a kind that keeps PodMonitors.
type monitoringController struct {
	ctl   controller.Controller
	owner client.Object
	list  client.ObjectList
}

// monitored is a resource whose spec may ask for monitoring.
type monitored interface {
	client.Object
	MonitoringEnabled() bool
}

// NewKeeper is the Keeper of the PodMonitors of mgr's controllers. servedAtStart is what the API server
// said as the operator started: when it serves the kind, passes wait until Serve or Settled.
func NewKeeper(mgr ctrl.Manager, servedAtStart bool) *Keeper {
	p := &Keeper{
		scheme: mgr.GetScheme(), mapper: mgr.GetRESTMapper(), resources: mgr.GetClient(),
		settled: make(chan struct{}),
	}
	if !servedAtStart {
		p.Settled()
	}
	return p
}

// Watch makes ctl, the controller of owner's kind, run a pass of the owner of a PodMonitor that
// changes or goes while the kind is served, so that an edited or deleted PodMonitor is restored.
// list is the list type of owner's kind.
func (p *Keeper) Watch(ctl controller.Controller, owner client.Object, list client.ObjectList) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	mc := monitoringController{ctl: ctl, owner: owner, list: list}
	p.controllers = append(p.controllers, mc)
	if p.podMonitors == nil {
		return nil
	}
	return p.watch(mc, p.podMonitors)
}

// Serve makes the controllers keep PodMonitors, read from podMonitors, a synced cache of those
// appkeeper manages. Once the operator has settled, the kind is new to it: every monitored
// resource gets a pass, which creates its PodMonitor.
func (p *Keeper) Serve(podMonitors cache.Cache) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	late := p.isSettled()
	for _, mc := range p.controllers {
		if err := p.watch(mc, podMonitors); err != nil {
			return err
		}
		if !late {
			continue
		}
		if err := mc.ctl.Watch(p.passOfEveryMonitored(mc.list)); err != nil {
			return err
		}
	}
	p.podMonitors = podMonitors
	p.Settled()
	return nil
}

// Drop makes the controllers leave PodMonitors alone: the kind is no longer served.
func (p *Keeper) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.podMonitors = nil
}

// Settled records that the operator knows whether the kind is served, even if Serve failed.
func (p *Keeper) Settled() {
	p.settleOnce.Do(func() { close(p.settled) })
}

func (p *Keeper) isSettled() bool {
	select {
	case <-p.settled:
		return true
	default:
		return false
	}
}

// served is the cache of PodMonitors, or nil while the kind is not served.
func (p *Keeper) served(ctx context.Context) (cache.Cache, error) {
	if p == nil {
		return nil, nil
	}
	select {
	case <-p.settled:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.podMonitors, nil
}

// watch is what builder.Owns and Watches with kube.EnqueueOnDeleteByChildName would make of the
// PodMonitor kind, on a controller that may run already.
func (p *Keeper) watch(mc monitoringController, podMonitors cache.Cache) error {
	owned := handler.EnqueueRequestForOwner(p.scheme, p.mapper, mc.owner, handler.OnlyControllerOwner())
	if err := mc.ctl.Watch(source.Kind[client.Object](podMonitors, New(), owned)); err != nil {
		return fmt.Errorf("watch PodMonitors: %w", err)
	}
	if err := mc.ctl.Watch(source.Kind[client.Object](podMonitors, New(), kube.EnqueueOnDeleteByChildName())); err != nil {
		return fmt.Errorf("watch PodMonitors: %w", err)
	}
	return nil
}

// passOfEveryMonitored queues, once, every resource of list's kind whose spec asks for monitoring.
func (p *Keeper) passOfEveryMonitored(list client.ObjectList) source.Source {
	return source.Func(func(ctx context.Context, queue workqueue.TypedRateLimitingInterface[ctrl.Request]) error {
		list := list.DeepCopyObject().(client.ObjectList)
		if err := p.resources.List(ctx, list); err != nil {
			return fmt.Errorf("list the resources that may need a PodMonitor: %w", err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			if m, ok := item.(monitored); ok && m.MonitoringEnabled() {
				queue.Add(ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m)})
			}
		}
		return nil
	})
}

// cachedReads reads from cache what it would read from Client's.
type cachedReads struct {
	client.Client
	cache client.Reader
}

func (c cachedReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.cache.Get(ctx, key, obj, opts...)
}

func (c cachedReads) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.cache.List(ctx, list, opts...)
}
