package rollout

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
)

// Record tells of the rollback d made, if any: a Warning Event on obj naming the failed and the
// restored revision, and a log line.
func Record(ctx context.Context, recorder events.EventRecorder, obj runtime.Object, d Decision) {
	if d.RolledBack == nil || d.Status.LastGood == nil {
		return
	}
	good := d.Status.LastGood
	log.FromContext(ctx).Info("rolled back a failed revision to the last good one",
		"failed", d.RolledBack.Name, "failedImage", d.RolledBack.Image, "reason", d.RolledBack.Reason,
		"restored", good.Name, "restoredImage", good.Image)
	event.RolledBack.Emit(recorder, obj, nil, "%s", rolledBackMessage(d.Status))
}

// rolledBackMessage tells, in one sentence, what failed and what runs instead.
func rolledBackMessage(st appsv1alpha1.RolloutStatus) string {
	failed, good := st.Failed, st.LastGood
	why := failed.Reason
	if failed.Message != "" {
		why = failed.Message
	}
	msg := fmt.Sprintf("revision %s (%s) failed: %s; rolled back to revision %s (%s), available since %s; the spec is unchanged and its revision is not tried again until it changes",
		failed.Name, failed.Image, why, good.Name, good.Image, good.Time.UTC().Format(time.RFC3339))
	if failed.Backup != "" {
		msg += fmt.Sprintf("; the backup taken before the upgrade is %s, to restore if the failed server changed the data", failed.Backup)
	}
	return msg
}

// Degraded is the kind's Degraded condition c, as the rollout changes it: True with reason
// RolledBack while the spec's revision is rolled back, or True with the failure's reason when the
// policy leaves a failed rollout in place. A pass that failed (passErr) speaks first.
func (d Decision) Degraded(c conditions.Condition, passErr error) conditions.Condition {
	switch {
	case passErr != nil:
		return c
	case d.RollBack && d.Status.Failed != nil && d.Status.LastGood != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack, rolledBackMessage(d.Status)
	case d.Stalled != nil && !c.IsTrue():
		c.Status, c.Reason = metav1.ConditionTrue, d.Stalled.Reason
		c.Message = d.Stalled.Message + "; automatic rollback is off (spec.upgrade.autoRollback)"
	}
	return c
}

// Progressing is the kind's Progressing condition c, as the rollout changes it: once the last good
// revision runs again, False with reason RolledBack.
func (d Decision) Progressing(c conditions.Condition) conditions.Condition {
	if d.RollBack && d.Status.Failed != nil && d.Status.LastGood != nil && !c.IsTrue() && c.Status != metav1.ConditionUnknown {
		c.Reason = appsv1alpha1.ReasonRolledBack
		c.Message = fmt.Sprintf("revision %s runs; the spec's revision %s was rolled back", d.Status.LastGood.Name, d.Status.Failed.Name)
	}
	return c
}
