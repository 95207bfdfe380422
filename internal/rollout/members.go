package rollout

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// FailedMembers are the members of sts that the revision d rolled back made and left not Ready
// (RolledBackMembers): a StatefulSet would wait for them before it puts the restored
// revision back, so the pass deletes them at once, and recovery takes the progress deadline and
// seconds, not a person. None unless d rolls back.
func (d Decision) FailedMembers(sts *appsv1.StatefulSet, pods []corev1.Pod) []*corev1.Pod {
	st := d.Status
	if !d.RollBack || st.Failed == nil || st.LastGood == nil || st.UpdateTime == nil {
		return nil
	}
	return RolledBackMembers(sts, pods, st.UpdateTime.Time)
}
