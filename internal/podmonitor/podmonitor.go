package podmonitor

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/kube"
)

// The operator scrapes nothing itself: where prometheus-operator runs, a PodMonitor per monitored
// resource tells it to scrape the exporters.
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=podmonitors,verbs=get;list;watch;create;patch;delete

// GVK is prometheus-operator's PodMonitor, used as unstructured so that appkeeper does
// not depend on prometheus-operator's Go types.
var GVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}

// Detect asks the API server's discovery whether it serves prometheus-operator's
// PodMonitor as the operator starts. When the kind is missing, that is logged once; the operator
// follows the kind's CRD all the same, and monitored resources get their PodMonitors as soon as it
// is installed.
func Detect(cfg *rest.Config, logger logr.Logger) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	groupVersion := GVK.GroupVersion().String()
	served, err := dc.ServerResourcesForGroupVersion(groupVersion)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("discover %s: %w", groupVersion, err)
	}
	if served != nil {
		for _, resource := range served.APIResources {
			if resource.Kind == GVK.Kind {
				return true, nil
			}
		}
	}
	logger.Info("prometheus-operator's PodMonitor is not installed: monitored resources get no PodMonitor " +
		"until it is; they get theirs as soon as prometheus-operator is installed, without a restart")
	return false, nil
}

// New is an empty PodMonitor object, for a watch or a read.
func New() *unstructured.Unstructured {
	pm := &unstructured.Unstructured{}
	pm.SetGroupVersionKind(GVK)
	return pm
}

// Reconcile makes owner's PodMonitor, named like owner, select the pods selector selects and scrape
// their port named metrics while enabled, and deletes it otherwise. A PodMonitor of that name that
// owner does not control is left alone and reported as a NameConflictError. While the cluster
// serves no PodMonitor, it does nothing.
func (p *Keeper) Reconcile(ctx context.Context, c kube.Client, owner client.Object, enabled bool, selector map[string]string) error {
	served, err := p.served(ctx)
	if served == nil || err != nil {
		return err
	}
	c.Client = cachedReads{Client: c.Client, cache: served}
	live := New()
	key := client.ObjectKeyFromObject(owner)
	if !enabled {
		return deletePodMonitor(ctx, c, owner, live)
	}
	ownerGVK, err := c.GroupVersionKindFor(owner)
	if err != nil {
		return err
	}
	result, err := apply.Unstructured(ctx, c, owner, live, podMonitor(owner, ownerGVK, selector))
	switch {
	case err != nil:
		return err
	case result == apply.Created:
		log.FromContext(ctx).Info("created PodMonitor", "podMonitor", key.Name)
	case result == apply.Updated:
		log.FromContext(ctx).Info("restored PodMonitor", "podMonitor", key.Name)
	}
	return nil
}

// deletePodMonitor deletes owner's PodMonitor if the cache holds one that owner controls.
func deletePodMonitor(ctx context.Context, c kube.Client, owner client.Object, live *unstructured.Unstructured) error {
	deleted, err := apply.DeleteChild(ctx, c, owner, client.ObjectKeyFromObject(owner), live)
	if err != nil {
		return fmt.Errorf("delete PodMonitor %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	if deleted {
		log.FromContext(ctx).Info("deleted PodMonitor: monitoring is off", "podMonitor", owner.GetName())
	}
	return nil
}

// podMonitor is the PodMonitor of owner: its pods, by selector, scraped on their port named metrics.
func podMonitor(owner client.Object, ownerGVK schema.GroupVersionKind, selector map[string]string) *unstructured.Unstructured {
	labels := map[string]any{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue}
	matchLabels := map[string]any{}
	for k, v := range selector {
		labels[k], matchLabels[k] = v, v
	}
	pm := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{
			"name": owner.GetName(), "namespace": owner.GetNamespace(), "labels": labels,
			"ownerReferences": []any{map[string]any{
				"apiVersion": ownerGVK.GroupVersion().String(), "kind": ownerGVK.Kind, "name": owner.GetName(),
				"uid": string(owner.GetUID()), "controller": true, "blockOwnerDeletion": true,
			}},
		},
		"spec": map[string]any{
			"selector":            map[string]any{"matchLabels": matchLabels},
			"podMetricsEndpoints": []any{map[string]any{"port": appsv1alpha1.ExporterPortName}},
		},
	}}
	pm.SetGroupVersionKind(GVK)
	return pm
}
