package reconcile

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition is one condition as a status computation decides it; SetConditions stamps it.
type Condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// SetConditions records conditions for generation, keeping each one's last transition time when its
// status did not change, so that an unchanged observation produces an unchanged status.
func SetConditions(conditions *[]metav1.Condition, generation int64, set ...Condition) {
	for _, c := range set {
		status := metav1.ConditionFalse
		if c.Status {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(conditions, metav1.Condition{
			Type:               c.Type,
			Status:             status,
			Reason:             c.Reason,
			Message:            c.Message,
			ObservedGeneration: generation,
		})
	}
}
