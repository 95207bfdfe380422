package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// podInstanceIndex indexes the cached pods by their instance label. Without it a list by labels
// reads every cached pod of the namespace, so each pass of one instance would cost in proportion to
// the number of instances beside it.
const podInstanceIndex = "pod.instance"

// IndexPodsByInstance registers the index that ListPods reads; the manager calls it once.
func IndexPodsByInstance(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &corev1.Pod{}, podInstanceIndex, func(obj client.Object) []string {
		if instance := obj.GetLabels()[appsv1alpha1.LabelInstance]; instance != "" {
			return []string{instance}
		}
		return nil
	})
}

// ListPods reads from the cache the pods in namespace that carry every one of selector's labels,
// which must include the instance label.
func ListPods(ctx context.Context, c client.Reader, namespace string, selector map[string]string) ([]corev1.Pod, error) {
	instance, ok := selector[appsv1alpha1.LabelInstance]
	if !ok {
		return nil, fmt.Errorf("pod selector %v has no %s label", selector, appsv1alpha1.LabelInstance)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels(selector),
		client.MatchingFields{podInstanceIndex: instance}); err != nil {
		return nil, err
	}
	return pods.Items, nil
}
