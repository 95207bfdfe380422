package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition is one condition as a status computation decides it; Set stamps it. Its
// Status is True, False or Unknown; left empty it is False, so that a computation names only the
// cases that are True or that it cannot know.
type Condition struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// IsTrue tells whether c is True.
func (c Condition) IsTrue() bool { return c.Status == metav1.ConditionTrue }

// Set records conditions for generation, keeping each one's last transition time when its
// status did not change, so that an unchanged observation produces an unchanged status.
func Set(conditions *[]metav1.Condition, generation int64, set ...Condition) {
	for _, c := range set {
		status := c.Status
		if status == "" {
			status = metav1.ConditionFalse
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
