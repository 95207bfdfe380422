// Package disruption keeps an instance's PodDisruptionBudgets: while the instance runs more than
// one pod, a drain evicts them one at a time, so that it never takes the instance to zero; while it
// runs one pod or none, the instance has no budget, and a drain evicts it as it would any pod.
package disruption

import (
	"context"
	"fmt"
	"slices"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Budget is one PodDisruptionBudget of an instance.
type Budget struct {
	Name string
	// Selector selects the pods it protects. The eviction API refuses a pod that two budgets
	// select, so an instance's budgets never overlap.
	Selector metav1.LabelSelector
	// MinAvailable is how many of those pods must stay ready; when nil, one may go at a time.
	MinAvailable *int32
}

// Keep applies owner's budget named name, over the pods selector selects, while owner asks for more
// than one pod, and deletes the budget of that name owner controls otherwise. A budget of that
// name that owner does not control is left alone and reported as a NameConflictError, as any child
// is. created, when not nil, collects the creation for the pass's Created Event.
func Keep(ctx context.Context, c kube.Client, owner client.Object, name string, selector map[string]string, pods int32, created *pass.Creations) error {
	var want []Budget
	if pods > 1 {
		want = []Budget{{Name: name, Selector: metav1.LabelSelector{MatchLabels: selector}}}
	}
	return KeepAll(ctx, c, owner, want, []string{name}, created)
}

// KeepAll applies each budget of want and deletes those of names, the budgets owner may have, that
// want leaves out, as Keep does for one.
func KeepAll(ctx context.Context, c kube.Client, owner client.Object, want []Budget, names []string, created *pass.Creations) error {
	for _, name := range names {
		if slices.ContainsFunc(want, func(b Budget) bool { return b.Name == name }) {
			continue
		}
		if err := remove(ctx, c, owner, name); err != nil {
			return err
		}
	}
	if len(want) == 0 {
		return nil
	}
	ownerGVK, err := c.GroupVersionKindFor(owner)
	if err != nil {
		return err
	}
	for _, b := range want {
		desired := parts.DisruptionBudget(b.Name, owner.GetNamespace(), parts.Labels(b.Selector.MatchLabels, appsv1alpha1.ManagedByValue),
			b.Selector, b.MinAvailable, parts.ControllerReference(owner, ownerGVK))
		live := &policyv1.PodDisruptionBudget{}
		result, _, err := apply.Child(ctx, c, owner, b.Name, live, desired, policyv1ac.ExtractPodDisruptionBudget)
		if err != nil {
			return fmt.Errorf("disruption budget %s of %s/%s: %w", b.Name, owner.GetNamespace(), owner.GetName(), err)
		}
		if result == apply.Created && created != nil {
			created.Add(live, "PodDisruptionBudget %s", b.Name)
		}
	}
	return nil
}

// remove deletes owner's budget named name if the cache holds one that owner controls.
func remove(ctx context.Context, c kube.Client, owner client.Object, name string) error {
	deleted, err := apply.DeleteChild(ctx, c, owner, client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}, &policyv1.PodDisruptionBudget{})
	if err != nil {
		return fmt.Errorf("delete the disruption budget %s of %s/%s: %w", name, owner.GetNamespace(), owner.GetName(), err)
	}
	if deleted {
		log.FromContext(ctx).Info("deleted PodDisruptionBudget: one pod or none left to protect", "podDisruptionBudget", name)
	}
	return nil
}
