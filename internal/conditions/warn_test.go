package conditions_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
)

func TestWarnWhenDegraded(t *testing.T) {
	degraded := func(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
		return []metav1.Condition{{Type: appsv1alpha1.ConditionDegraded, Status: status, Reason: reason, Message: message}}
	}
	fine := degraded(metav1.ConditionFalse, appsv1alpha1.ReasonAsExpected, "")
	missing := degraded(metav1.ConditionTrue, appsv1alpha1.ReasonReconcileFailed, `Secret "db" not found`)
	for _, tt := range []struct {
		name          string
		before, after []metav1.Condition
		want          string
	}{
		{"turns True", fine, missing, `Warning ReconcileFailed Secret "db" not found`},
		{"first status", nil, missing, `Warning ReconcileFailed Secret "db" not found`},
		{"stays True", missing, missing, ""},
		{"same reason, other message", missing, degraded(metav1.ConditionTrue, appsv1alpha1.ReasonReconcileFailed, "timeout"), ""},
		{"other reason", missing, degraded(metav1.ConditionTrue, appsv1alpha1.ReasonCrashLoopBackOff, "pod web-1"),
			"Warning CrashLoopBackOff pod web-1"},
		{"needs a person, new message", degraded(metav1.ConditionTrue, appsv1alpha1.ReasonNameConflict, "Service web"),
			degraded(metav1.ConditionTrue, appsv1alpha1.ReasonNameConflict, "Deployment web"), "Warning NameConflict Deployment web"},
		{"recovers", missing, fine, ""},
		{"unknown", fine, degraded(metav1.ConditionUnknown, appsv1alpha1.ReasonReadFailed, "cache"), ""},
		{"rolled back announces itself", fine, degraded(metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack, "crash loop"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			recorder := events.NewFakeRecorder(10)
			conditions.WarnWhenDegraded(context.Background(), recorder, &corev1.Pod{}, tt.before, tt.after)
			close(recorder.Events)
			var got []string
			for e := range recorder.Events {
				got = append(got, e)
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("events %q, want none", got)
			case tt.want != "" && (len(got) != 1 || got[0] != tt.want):
				t.Errorf("events %q, want exactly %q", got, tt.want)
			}
		})
	}
}
