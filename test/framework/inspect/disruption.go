package inspect

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DisruptionBudgetProblem says what is wrong with owner's PodDisruptionBudget, named like owner, as
// a drain would meet it: it must select owner's pods, let one be evicted at a time, and let a pod
// that is not ready go whatever the others do. Or that there is none.
func DisruptionBudgetProblem(ctx context.Context, c client.Client, owner Selecting) error {
	pdb := &policyv1.PodDisruptionBudget{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(owner), pdb); err != nil {
		return err
	}
	if ref := metav1.GetControllerOf(pdb); ref == nil || ref.UID != owner.GetUID() {
		return fmt.Errorf("the PodDisruptionBudget's controller is %v, want %s", ref, owner.GetName())
	}
	spec := pdb.Spec
	if spec.Selector == nil || !reflect.DeepEqual(spec.Selector.MatchLabels, owner.SelectorLabels()) || len(spec.Selector.MatchExpressions) > 0 {
		return fmt.Errorf("the PodDisruptionBudget selects %v, want the resource's pods %v", spec.Selector, owner.SelectorLabels())
	}
	if one := intstr.FromInt32(1); spec.MaxUnavailable == nil || *spec.MaxUnavailable != one || spec.MinAvailable != nil {
		return fmt.Errorf("the PodDisruptionBudget allows maxUnavailable %v, minAvailable %v; want one pod at a time", spec.MaxUnavailable, spec.MinAvailable)
	}
	if spec.UnhealthyPodEvictionPolicy == nil || *spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
		return fmt.Errorf("the PodDisruptionBudget's unhealthy pod eviction policy is %v, want AlwaysAllow", spec.UnhealthyPodEvictionPolicy)
	}
	return nil
}

// NoDisruptionBudget is nil once owner has no PodDisruptionBudget.
func NoDisruptionBudget(ctx context.Context, c client.Client, owner client.Object) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(owner), &policyv1.PodDisruptionBudget{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%s still has a PodDisruptionBudget", owner.GetName())
}

// SpreadProblem says why pods with affinity would not prefer nodes that run no other pod matching
// selector, or nil when they would.
func SpreadProblem(affinity *corev1.Affinity, selector map[string]string) error {
	if affinity == nil || affinity.PodAntiAffinity == nil {
		return fmt.Errorf("the pods have no anti-affinity: %+v", affinity)
	}
	for _, term := range affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if term.PodAffinityTerm.TopologyKey == corev1.LabelHostname && term.PodAffinityTerm.LabelSelector != nil &&
			reflect.DeepEqual(term.PodAffinityTerm.LabelSelector.MatchLabels, selector) {
			return nil
		}
	}
	return fmt.Errorf("no preferred anti-affinity on %s for the pods %v: %+v", corev1.LabelHostname, selector, affinity.PodAntiAffinity)
}
