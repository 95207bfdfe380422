package conditions

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// StartingPods counts the pods of an application that wants replicas pods which are being added:
// those not created yet and those that joined after the application last became Available and
// are not ready yet (a scale up, the surge of a rollout, a replacement). A pod that served when the
// application became Available and stopped is not counted, so losing it still counts against
// availability. Without a True Available condition nothing is starting in this sense, and the
// plain minimum applies.
func StartingPods(conditions []metav1.Condition, pods []corev1.Pod, replicas int32) int32 {
	available := meta.FindStatusCondition(conditions, appsv1alpha1.ConditionAvailable)
	if available == nil || available.Status != metav1.ConditionTrue {
		return 0
	}
	var starting, existing int32
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		existing++
		// Timestamps have whole seconds: a pod created in the second the application became
		// Available may have served then, so only a later one counts as added.
		if !PodReady(pod) && pod.CreationTimestamp.After(available.LastTransitionTime.Time) {
			starting++
		}
	}
	return starting + max(0, replicas-existing)
}

// ServesMinimum tells whether an application with available replicas serves at least minimum, its
// minimum availability; starting (StartingPods) is the capacity being added, which a scale up does
// not lose. At least one replica must serve for the application to be Available at all.
func ServesMinimum(available, starting, minimum int32) bool {
	return available >= minimum || available > 0 && available+starting >= minimum
}
