package conditions_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
)

func TestReadySaysWhyNot(t *testing.T) {
	const (
		yes     = metav1.ConditionTrue
		no      = metav1.ConditionFalse
		unknown = metav1.ConditionUnknown
	)
	cond := func(condType string, status metav1.ConditionStatus, reason string) conditions.Condition {
		return conditions.Condition{Type: condType, Status: status, Reason: reason, Message: reason + " in words"}
	}
	available := cond(appsv1alpha1.ConditionAvailable, yes, appsv1alpha1.ReasonAsExpected)
	done := cond(appsv1alpha1.ConditionProgressing, no, appsv1alpha1.ReasonRolloutComplete)
	healthy := cond(appsv1alpha1.ConditionDegraded, no, appsv1alpha1.ReasonAsExpected)
	tests := []struct {
		name                             string
		available, progressing, degraded conditions.Condition
		prerequisites                    []conditions.Condition
		status                           metav1.ConditionStatus
		reason                           string
	}{
		{"serving, rolled out, healthy", available, done, healthy, nil, yes, appsv1alpha1.ReasonAsExpected},
		{"scaled to zero as asked", cond(appsv1alpha1.ConditionAvailable, no, appsv1alpha1.ReasonScaledToZero), done, healthy, nil,
			yes, appsv1alpha1.ReasonScaledToZero},
		{"creating", cond(appsv1alpha1.ConditionAvailable, no, appsv1alpha1.ReasonCreating),
			cond(appsv1alpha1.ConditionProgressing, yes, appsv1alpha1.ReasonCreating), healthy, nil, no, appsv1alpha1.ReasonCreating},
		{"serving while rolling out", available, cond(appsv1alpha1.ConditionProgressing, yes, appsv1alpha1.ReasonRollingOut), healthy, nil,
			no, appsv1alpha1.ReasonRollingOut},
		{"a pod that cannot pull its image during a rollout", available, cond(appsv1alpha1.ConditionProgressing, yes, appsv1alpha1.ReasonRollingOut),
			cond(appsv1alpha1.ConditionDegraded, yes, appsv1alpha1.ReasonImagePullBackOff), nil, no, appsv1alpha1.ReasonImagePullBackOff},
		{"a pod that stopped serving", cond(appsv1alpha1.ConditionAvailable, no, appsv1alpha1.ReasonReplicasNotReady), done, healthy, nil,
			no, appsv1alpha1.ReasonReplicasNotReady},
		{"pods that could not be read", available, done, cond(appsv1alpha1.ConditionDegraded, unknown, appsv1alpha1.ReasonReadFailed), nil,
			unknown, appsv1alpha1.ReasonReadFailed},
		{"a database that is not ready", available, done, healthy,
			[]conditions.Condition{cond(appsv1alpha1.ConditionDatabaseReady, no, appsv1alpha1.ReasonWaitingForDatabase)},
			no, appsv1alpha1.ReasonWaitingForDatabase},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []metav1.Condition
			conditions.SetHealthConditions(&got, 4, tt.available, tt.progressing, tt.degraded, tt.prerequisites...)
			byType := map[string]metav1.Condition{}
			for _, c := range got {
				byType[c.Type] = c
				if c.ObservedGeneration != 4 {
					t.Errorf("%s is for generation %d, want 4", c.Type, c.ObservedGeneration)
				}
			}
			ready, stalled := byType[appsv1alpha1.ConditionReady], byType[appsv1alpha1.ConditionStalled]
			if ready.Status != tt.status || ready.Reason != tt.reason || ready.Message == "" {
				t.Errorf("Ready = %s %s %q, want %s %s with a message", ready.Status, ready.Reason, ready.Message, tt.status, tt.reason)
			}
			degraded := byType[appsv1alpha1.ConditionDegraded]
			if stalled.Status != degraded.Status || stalled.Reason != degraded.Reason || stalled.Message != degraded.Message {
				t.Errorf("Stalled = %+v, want Degraded's status, reason and message: %+v", stalled, degraded)
			}
		})
	}
}
