package parts

import (
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
)

// SpreadOverNodes prefers, for each pod matching selector, a node that runs no other such pod, so
// that the loss or the drain of one node takes one of them. It is a preference, not a rule: when
// there are fewer nodes than pods, the pods still run.
func SpreadOverNodes(selector map[string]string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey:   corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: selector},
			},
		}},
	}}
}

// AffinityOrSpread is the user's affinity, or when they gave none the preference to spread over
// nodes.
func AffinityOrSpread(user *corev1.Affinity, selector map[string]string) *corev1.Affinity {
	if user != nil {
		return user
	}
	return SpreadOverNodes(selector)
}

// DisruptionBudget lets a voluntary disruption, a drain's eviction, take the pods selector selects
// only while minAvailable of them stay ready, or one at a time when minAvailable is nil. A pod that
// is not ready may always be evicted: it serves nothing, and a pod that never becomes ready must not
// hold a node's drain forever.
func DisruptionBudget(name, namespace string, labels map[string]string, selector metav1.LabelSelector, minAvailable *int32,
	owner *metav1ac.OwnerReferenceApplyConfiguration) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	spec := policyv1ac.PodDisruptionBudgetSpec().
		WithSelector(ApplyConfiguration[metav1ac.LabelSelectorApplyConfiguration](selector)).
		WithUnhealthyPodEvictionPolicy(policyv1.AlwaysAllow)
	if minAvailable != nil {
		spec.WithMinAvailable(intstr.FromInt32(*minAvailable))
	} else {
		spec.WithMaxUnavailable(intstr.FromInt32(1))
	}
	return policyv1ac.PodDisruptionBudget(name, namespace).
		WithLabels(labels).
		WithOwnerReferences(owner).
		WithSpec(spec)
}
