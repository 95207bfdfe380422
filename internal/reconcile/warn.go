package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// needsAPerson are the Degraded reasons that only a person can clear.
var needsAPerson = map[string]bool{
	appsv1alpha1.ReasonNameConflict:    true,
	appsv1alpha1.ReasonCredentialsLost: true,
	appsv1alpha1.ReasonInvalidSpec:     true,
}

// WarnWhenStuck records a Warning Event, and logs the decision, when Degraded turns to a reason
// that only a person can clear, once per change of reason or message; the retries that follow stay
// silent.
func WarnWhenStuck(ctx context.Context, recorder events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	now := meta.FindStatusCondition(after, appsv1alpha1.ConditionDegraded)
	if now == nil || now.Status != metav1.ConditionTrue || !needsAPerson[now.Reason] {
		return
	}
	if was := meta.FindStatusCondition(before, appsv1alpha1.ConditionDegraded); was != nil &&
		was.Status == now.Status && was.Reason == now.Reason && was.Message == now.Message {
		return
	}
	log.FromContext(ctx).Info("waiting for a person", "reason", now.Reason, "problem", now.Message)
	recorder.Eventf(obj, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
}
