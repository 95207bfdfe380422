// Package disruption keeps an instance's PodDisruptionBudget: while the instance runs more than one
// pod, a drain evicts them one at a time, so that it never takes the instance to zero; while it
// runs one pod or none, the instance has no budget, and a drain evicts it as it would any pod.
package disruption

import (
	"context"
	"fmt"

	policyv1 "k8s.io/api/policy/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete

// Keep applies owner's budget named name, over the pods selector selects, while owner asks for more
// than one pod, and deletes the budget of that name owner controls otherwise. A budget of that
// name that owner does not control is left alone and reported as a NameConflictError, as any child
// is. created, when not nil, collects the creation for the pass's Created Event.
func Keep(ctx context.Context, c kube.Client, owner client.Object, name string, selector map[string]string, pods int32, created *pass.Creations) error {
	live := &policyv1.PodDisruptionBudget{}
	if pods <= 1 {
		return remove(ctx, c, owner, name, live)
	}
	ownerGVK, err := c.GroupVersionKindFor(owner)
	if err != nil {
		return err
	}
	desired := parts.DisruptionBudget(name, owner.GetNamespace(), parts.Labels(selector, appsv1alpha1.ManagedByValue), selector,
		parts.ControllerReference(owner, ownerGVK))
	result, _, err := apply.Child(ctx, c, owner, name, live, desired, policyv1ac.ExtractPodDisruptionBudget)
	if err != nil {
		return fmt.Errorf("disruption budget of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	if result == apply.Created && created != nil {
		created.Add(live, "PodDisruptionBudget %s", name)
	}
	return nil
}

// remove deletes owner's budget named name if the cache holds one that owner controls.
func remove(ctx context.Context, c kube.Client, owner client.Object, name string, live *policyv1.PodDisruptionBudget) error {
	deleted, err := apply.DeleteChild(ctx, c, owner, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, live)
	if err != nil {
		return fmt.Errorf("delete the disruption budget of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	if deleted {
		log.FromContext(ctx).Info("deleted PodDisruptionBudget: one pod or none left to protect", "podDisruptionBudget", name)
	}
	return nil
}
