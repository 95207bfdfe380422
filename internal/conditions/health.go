package conditions

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// SetHealthConditions records the Available, Progressing and Degraded conditions of an
// application, and the kind's own conditions that must be True for it to serve (prerequisites,
// such as DatabaseReady), then Ready and Stalled, which summarise them. Tools that judge health the
// way kstatus does read only Ready and Stalled (besides status.observedGeneration): without them,
// an application that is still starting would read as healthy.
func SetHealthConditions(conditions *[]metav1.Condition, generation int64, available, progressing, degraded Condition,
	prerequisites ...Condition) {
	Set(conditions, generation, append([]Condition{available, progressing, degraded}, prerequisites...)...)
	SetSummaryConditions(conditions, generation, available, progressing, degraded, prerequisites...)
}

// SetSummaryConditions records Ready and Stalled alone, by the rules of SetHealthConditions, for a
// kind whose own conditions say in other words whether it is done, under way or failed (a backup:
// Complete and Verified), so that it reads to kstatus the way an application does.
func SetSummaryConditions(conditions *[]metav1.Condition, generation int64, available, progressing, degraded Condition,
	prerequisites ...Condition) {
	Set(conditions, generation, Ready(available, progressing, degraded, prerequisites...), stalled(degraded))
}

// Ready is True when the application is Available (or scaled to zero, as asked), not Progressing,
// not Degraded and every prerequisite is True. Otherwise it takes the reason and message of what
// keeps it from being Ready, in this order: Degraded, Progressing, a condition that is Unknown,
// Available, the prerequisites. A condition that is Unknown makes Ready Unknown.
func Ready(available, progressing, degraded Condition, prerequisites ...Condition) Condition {
	notReady := func(why Condition) Condition {
		status := metav1.ConditionFalse
		if why.Status == metav1.ConditionUnknown {
			status = metav1.ConditionUnknown
		}
		return Condition{Type: appsv1alpha1.ConditionReady, Status: status, Reason: why.Reason, Message: why.Message}
	}
	switch {
	case degraded.IsTrue():
		return notReady(degraded)
	case progressing.IsTrue():
		return notReady(progressing)
	}
	for _, c := range []Condition{available, progressing, degraded} {
		if c.Status == metav1.ConditionUnknown {
			return notReady(c)
		}
	}
	scaledToZero := available.Reason == appsv1alpha1.ReasonScaledToZero
	if !available.IsTrue() && !scaledToZero {
		return notReady(available)
	}
	for _, c := range prerequisites {
		if !c.IsTrue() {
			return notReady(c)
		}
	}
	c := Condition{Type: appsv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: appsv1alpha1.ReasonAsExpected,
		Message: available.Message}
	if scaledToZero {
		c.Reason = appsv1alpha1.ReasonScaledToZero
	}
	return c
}

// stalled is degraded under the name kstatus reads.
func stalled(degraded Condition) Condition {
	degraded.Type = appsv1alpha1.ConditionStalled
	return degraded
}
