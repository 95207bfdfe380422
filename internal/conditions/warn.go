package conditions

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/event"
)

// needsAPerson are the Degraded reasons that only a person can clear.
var needsAPerson = map[string]bool{
	appsv1alpha1.ReasonNameConflict:    true,
	appsv1alpha1.ReasonCredentialsLost: true,
	appsv1alpha1.ReasonInvalidSpec:     true,
}

// announcedByRollout are the Degraded reasons whose Warning Event the rollout sends itself, once
// the status that records them is written.
var announcedByRollout = map[string]bool{appsv1alpha1.ReasonRolledBack: true}

// WarnWhenDegraded records a Warning Event, with the condition's reason and message, when Degraded
// turns True or changes reason: `kubectl get events` and `kubectl describe` then tell why an
// instance is not working. For a reason that only a person can clear, a new message warns again
// and the decision is logged; the retries that follow stay silent.
func WarnWhenDegraded(ctx context.Context, recorder events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	now := meta.FindStatusCondition(after, appsv1alpha1.ConditionDegraded)
	if now == nil || now.Status != metav1.ConditionTrue || announcedByRollout[now.Reason] {
		return
	}
	if was := meta.FindStatusCondition(before, appsv1alpha1.ConditionDegraded); was != nil &&
		was.Status == now.Status && was.Reason == now.Reason && (was.Message == now.Message || !needsAPerson[now.Reason]) {
		return
	}
	if needsAPerson[now.Reason] {
		log.FromContext(ctx).Info("waiting for a person", "reason", now.Reason, "problem", now.Message)
	}
	event.Degraded(now.Reason).Emit(recorder, obj, nil, "%s", now.Message)
}
