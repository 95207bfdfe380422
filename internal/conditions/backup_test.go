package conditions_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
)

func TestBackupReadyAndStalledSayWhy(t *testing.T) {
	const (
		yes     = metav1.ConditionTrue
		no      = metav1.ConditionFalse
		unknown = metav1.ConditionUnknown
	)
	complete := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: appsv1alpha1.ConditionComplete, Status: status, Reason: reason, Message: reason + " in words"}
	}
	verified := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: appsv1alpha1.ConditionVerified, Status: status, Reason: reason, Message: reason + " in words"}
	}
	succeeded := complete(yes, appsv1alpha1.ReasonBackupSucceeded)
	tests := []struct {
		name          string
		conditions    []metav1.Condition
		ready         metav1.ConditionStatus
		reason        string
		stalledReason string
	}{
		{"not started", nil, no, string(appsv1alpha1.BackupPending), ""},
		{"waiting for its MySQL", []metav1.Condition{complete(unknown, appsv1alpha1.ReasonWaitingForMySQL)},
			no, appsv1alpha1.ReasonWaitingForMySQL, ""},
		{"running", []metav1.Condition{complete(unknown, appsv1alpha1.ReasonBackupRunning)}, no, appsv1alpha1.ReasonBackupRunning, ""},
		{"succeeded", []metav1.Condition{succeeded}, yes, appsv1alpha1.ReasonAsExpected, ""},
		{"failed", []metav1.Condition{complete(no, appsv1alpha1.ReasonBackupFailed)},
			no, appsv1alpha1.ReasonBackupFailed, appsv1alpha1.ReasonBackupFailed},
		{"no storage", []metav1.Condition{complete(no, appsv1alpha1.ReasonInvalidSpec)},
			no, appsv1alpha1.ReasonInvalidSpec, appsv1alpha1.ReasonInvalidSpec},
		{"being verified", []metav1.Condition{succeeded, verified(unknown, appsv1alpha1.ReasonVerificationRunning)},
			no, appsv1alpha1.ReasonVerificationRunning, ""},
		{"verification waits for the MySQL", []metav1.Condition{succeeded, verified(unknown, appsv1alpha1.ReasonWaitingForMySQL)},
			no, appsv1alpha1.ReasonWaitingForMySQL, ""},
		{"verified", []metav1.Condition{succeeded, verified(yes, appsv1alpha1.ReasonVerificationPassed)}, yes, appsv1alpha1.ReasonAsExpected, ""},
		{"a table differs", []metav1.Condition{succeeded, verified(no, appsv1alpha1.ReasonVerificationFailed)},
			no, appsv1alpha1.ReasonVerificationFailed, appsv1alpha1.ReasonVerificationFailed},
		{"the verification could not run", []metav1.Condition{succeeded, verified(unknown, appsv1alpha1.ReasonVerificationFailed)},
			no, appsv1alpha1.ReasonVerificationFailed, appsv1alpha1.ReasonVerificationFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]metav1.Condition{}, tt.conditions...)
			conditions.SetBackupHealth(&got, 3)
			ready := meta.FindStatusCondition(got, appsv1alpha1.ConditionReady)
			if ready == nil || ready.Status != tt.ready || ready.Reason != tt.reason || ready.Message == "" || ready.ObservedGeneration != 3 {
				t.Errorf("Ready = %+v, want %s %s with a message, at generation 3", ready, tt.ready, tt.reason)
			}
			stalled := meta.FindStatusCondition(got, appsv1alpha1.ConditionStalled)
			wantStalled, wantReason := no, appsv1alpha1.ReasonAsExpected
			if tt.stalledReason != "" {
				wantStalled, wantReason = yes, tt.stalledReason
			}
			if stalled == nil || stalled.Status != wantStalled || stalled.Reason != wantReason || stalled.Message == "" {
				t.Errorf("Stalled = %+v, want %s %s with a message", stalled, wantStalled, wantReason)
			}
			if wantStalled == yes && stalled.Message != ready.Message {
				t.Errorf("Stalled says %q, Ready %q: want the failure's message in both", stalled.Message, ready.Message)
			}
		})
	}
}
