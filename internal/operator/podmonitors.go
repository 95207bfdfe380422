package operator

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/podmonitor"
)

// The operator follows the one CRD that defines prometheus-operator's PodMonitor, by name and its
// metadata only, to learn when the kind appears or goes.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,resourceNames=podmonitors.monitoring.coreos.com,verbs=list;watch

// podMonitorCRDName is the name of the CRD of prometheus-operator's PodMonitor: its plural and
// group, as every CRD's name is.
const podMonitorCRDName = "podmonitors.monitoring.coreos.com"

// podMonitorSyncTimeout bounds the wait for the first list of PodMonitors once their CRD exists:
// the kind is served a moment after its CRD is created, and a list that still fails after this
// long (refused, or a CRD that serves no v1) is logged and tried again when the CRD next changes.
const podMonitorSyncTimeout = 2 * time.Minute

// podMonitorCRD is the metadata of the PodMonitor CRD, as the manager's cache holds it.
func podMonitorCRD() *metav1.PartialObjectMetadata {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return crd
}

// podMonitorCRDOnly restricts the manager's cache of CRDs to the PodMonitor CRD, which is all that
// the operator may list.
func podMonitorCRDOnly() cache.ByObject {
	return cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", podMonitorCRDName)}
}

// podMonitorKind serves PodMonitors to the controllers while the PodMonitor CRD exists, whether it
// was there when the operator started or was installed since, and stops when it is deleted.
type podMonitorKind struct {
	crds        client.Reader
	podMonitors cache.Cache
	// apiServer asks the API server itself whether it serves PodMonitors yet.
	apiServer client.Reader
	keeper    *podmonitor.Keeper
	changed   chan struct{}
	log       logr.Logger
	served    bool
}

// followPodMonitorKind adds to mgr what serves keeper its PodMonitors: a cache of those appkeeper
// manages, in the namespaces of managerCache, and the watch of their CRD.
func followPodMonitorKind(mgr ctrl.Manager, managerCache cache.Options, keeper *podmonitor.Keeper) error {
	// The kind's resource is known from its CRD's name, not from discovery, so that the operator
	// can ask for PodMonitors while the CRD is being established.
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(podmonitor.GVK, meta.RESTScopeNamespace)
	podMonitors, err := newPodMonitorCache(mgr, managerCache, mapper)
	if err != nil {
		return err
	}
	apiServer, err := client.New(mgr.GetConfig(), client.Options{HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mapper})
	if err != nil {
		return err
	}
	k := &podMonitorKind{
		crds: mgr.GetCache(), podMonitors: podMonitors, apiServer: apiServer, keeper: keeper,
		changed: make(chan struct{}, 1), log: ctrl.Log.WithName("podmonitors"),
	}
	informer, err := mgr.GetCache().GetInformer(context.Background(), podMonitorCRD())
	if err != nil {
		return fmt.Errorf("watch the PodMonitor CRD: %w", err)
	}
	changed := func(any) { k.notify() }
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: changed, UpdateFunc: func(any, any) { k.notify() }, DeleteFunc: changed,
	}); err != nil {
		return fmt.Errorf("watch the PodMonitor CRD: %w", err)
	}
	return mgr.Add(k)
}

// newPodMonitorCache is a cache of the PodMonitors appkeeper manages, added to mgr.
func newPodMonitorCache(mgr ctrl.Manager, managerCache cache.Options, mapper meta.RESTMapper) (cache.Cache, error) {
	podMonitors, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:        mgr.GetHTTPClient(),
		Scheme:            mgr.GetScheme(),
		Mapper:            mapper,
		DefaultNamespaces: managerCache.DefaultNamespaces,
		ByObject:          map[client.Object]cache.ByObject{podmonitor.New(): {Label: managedLabel}},
		DefaultTransform:  keepOwnManagedFields,
		NewInformer:       managerCache.NewInformer,
	})
	if err != nil {
		return nil, fmt.Errorf("create the cache of PodMonitors: %w", err)
	}
	if err := mgr.Add(podMonitors); err != nil {
		return nil, fmt.Errorf("start the cache of PodMonitors: %w", err)
	}
	return podMonitors, nil
}

// notify wakes Start; a change already pending covers this one.
func (k *podMonitorKind) notify() {
	select {
	case k.changed <- struct{}{}:
	default:
	}
}

// NeedLeaderElection is true: the controllers it serves run on the leader only, and a controller
// that has not started yet must not be handed a watch of a kind that may be gone when it does.
func (k *podMonitorKind) NeedLeaderElection() bool { return true }

// Start follows the CRD until ctx ends. The manager starts it once its cache, and so the watch of
// the CRD, has synced.
func (k *podMonitorKind) Start(ctx context.Context) error {
	for {
		k.follow(ctx)
		k.keeper.Settled()
		select {
		case <-ctx.Done():
			return nil
		case <-k.changed:
		}
	}
}

// follow serves PodMonitors if their CRD exists and they are not served yet, and stops serving
// them when it is gone or being deleted.
func (k *podMonitorKind) follow(ctx context.Context) {
	exists, err := k.crdExists(ctx)
	switch {
	case err != nil:
		k.log.Error(err, "read the PodMonitor CRD; trying again when it changes")
	case exists && !k.served:
		if err := k.serve(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			k.log.Error(err, "prometheus-operator's PodMonitor CRD exists but its PodMonitors cannot be read; "+
				"trying again when the CRD changes")
			return
		}
		k.served = true
		k.log.Info("prometheus-operator's PodMonitor is installed: monitored resources get their PodMonitors")
	case !exists && k.served:
		k.keeper.Drop()
		if err := k.podMonitors.RemoveInformer(ctx, podmonitor.New()); err != nil {
			k.log.Error(err, "stop watching PodMonitors")
		}
		k.served = false
		k.log.Info("prometheus-operator's PodMonitor CRD is deleted: monitored resources keep no PodMonitor " +
			"until it is installed again")
	}
}

// crdExists tells whether the PodMonitor CRD exists and is not being deleted.
func (k *podMonitorKind) crdExists(ctx context.Context) (bool, error) {
	crd := podMonitorCRD()
	err := k.crds.Get(ctx, client.ObjectKey{Name: podMonitorCRDName}, crd)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil && crd.DeletionTimestamp == nil, err
}

// serve waits until the API server serves PodMonitors, starts their watch, waits until it has
// listed them, and hands them to the controllers.
func (k *podMonitorKind) serve(ctx context.Context) error {
	listed, cancel := context.WithTimeout(ctx, podMonitorSyncTimeout)
	defer cancel()
	if err := k.waitServed(listed); err != nil {
		return err
	}
	if _, err := k.podMonitors.GetInformer(listed, podmonitor.New()); err != nil {
		if err := k.podMonitors.RemoveInformer(ctx, podmonitor.New()); err != nil {
			k.log.Error(err, "stop watching PodMonitors")
		}
		return fmt.Errorf("list PodMonitors: %w", err)
	}
	return k.keeper.Serve(k.podMonitors)
}

// waitServed returns once the API server answers a list of PodMonitors: it serves a new CRD's kind
// a moment after the CRD is created, and a little later than the last change of the CRD that the
// operator sees. Waiting here, rather than in the watch, keeps that moment out of the error log
// and spares the watch's backoff, which would start at 0.8 s.
func (k *podMonitorKind) waitServed(ctx context.Context) error {
	var err error
	// Doubling from 20 ms, then every 5 s until ctx ends.
	delay := wait.Backoff{Duration: 20 * time.Millisecond, Factor: 2, Cap: 5 * time.Second, Steps: math.MaxInt32}.DelayFunc()
	if delay.Until(ctx, true, false, func(ctx context.Context) (bool, error) {
		probe := &metav1.PartialObjectMetadataList{}
		probe.SetGroupVersionKind(podmonitor.GVK.GroupVersion().WithKind("PodMonitorList"))
		err = k.apiServer.List(ctx, probe, client.Limit(1), client.MatchingLabelsSelector{Selector: managedLabel})
		if !apierrors.IsNotFound(err) {
			return true, err
		}
		return false, nil
	}) != nil && apierrors.IsNotFound(err) {
		return fmt.Errorf("the API server does not serve PodMonitors: %w", err)
	}
	return err
}
