// Package rollout decides, the same way for every kind, which revision of an instance's pods the
// operator applies: the spec's, or, once the spec's has failed, the last one whose pods were all
// available. The decision is a pure function of the policy, the status last written, the spec's
// revision, the pods and the time.
package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
)

// Revision is one revision of an instance's pods, as built from a spec.
type Revision struct {
	// Name is the hash of the pods' template (Hash).
	Name  string
	Image string
	// ConfigHash identifies the server configuration, for the kinds that have one.
	ConfigHash string
	// Spec is the spec the revision is built from (Snapshot).
	Spec runtime.RawExtension
}

// Input is what a pass knows before it applies anything.
type Input struct {
	Policy appsv1alpha1.UpgradePolicy
	// Status is the rollout status as last written.
	Status appsv1alpha1.RolloutStatus
	// Desired is the revision the spec as written asks for.
	Desired Revision
	// Pods are the instance's pods as the cache has them.
	Pods []corev1.Pod
	Now  time.Time
}

// Decision is which revision a pass applies, and the rollout status it leaves.
type Decision struct {
	Status appsv1alpha1.RolloutStatus
	// RollBack: the pods are built from Status.LastGood.Spec, not from the spec.
	RollBack bool
	// RolledBack is the failure this pass found and rolled back, for an Event and the counter;
	// nil on every other pass.
	RolledBack *appsv1alpha1.FailedRevision
	// Started: this pass is the first to see the spec ask for a revision other than the last good
	// one, a rollout to count. A new instance's first revision, with no last good one, is not.
	Started bool
	// Completed: this pass made the spec's revision the last good one in place of another (Complete).
	Completed bool
	// Stalled is the failure found when the policy does not roll back: the spec's revision stays
	// applied and Degraded says why.
	Stalled *appsv1alpha1.FailedRevision
	// Recheck is when the progress deadline of a rollout still under way runs out, or zero.
	Recheck time.Duration
}

// Decide chooses the revision to apply. The spec's revision is applied unless it is new (there is
// a last good revision and it is another), and has failed: a pod created since the spec asked for
// it cannot run without help (FindPodProblem, except Unschedulable, which only the deadline
// judges), or its pods have not all become available within the progress deadline. A failed
// revision is rolled back to the last good one when the policy says so, and stays rolled back
// until the spec asks for another revision: never a retry, never a second rollback in a row.
func Decide(in Input) Decision {
	st := *in.Status.DeepCopy()
	d := Decision{}
	if st.UpdateRevision != in.Desired.Name {
		st.UpdateRevision = in.Desired.Name
		st.UpdateTime = &metav1.Time{Time: in.Now}
		d.Started = st.LastGood != nil && st.LastGood.Name != in.Desired.Name
	}
	if st.Failed != nil && st.Failed.Name != in.Desired.Name {
		// The spec changed: the new revision gets its chance.
		st.Failed = nil
	}
	switch {
	case st.Failed != nil && st.LastGood != nil:
		d.RollBack = true
	case st.LastGood == nil || st.LastGood.Name == in.Desired.Name:
		// Nothing to go back to, or nothing new to judge.
	default:
		failure := failureOf(in, st.UpdateTime.Time)
		switch {
		case failure == nil:
			d.Recheck = deadlineAt(in.Policy, st.UpdateTime.Time).Sub(in.Now)
		case in.Policy.RollsBack():
			st.Failed = failure
			st.Rollbacks++
			d.RollBack, d.RolledBack = true, failure
		default:
			d.Stalled = failure
		}
	}
	st.CurrentRevision = in.Desired.Name
	if d.RollBack {
		st.CurrentRevision = st.LastGood.Name
	}
	d.Status = st
	return d
}

// Complete records that the revision this pass applied runs on every replica, all of them
// available: the spec's revision becomes the last good one. It is called only with evidence,
// that is at least one available replica.
func (d *Decision) Complete(desired Revision, now time.Time) {
	if d.RollBack || d.Status.CurrentRevision != desired.Name || (d.Status.LastGood != nil && d.Status.LastGood.Name == desired.Name) {
		return
	}
	d.Completed = d.Status.LastGood != nil
	d.Status.LastGood = &appsv1alpha1.GoodRevision{
		Name: desired.Name, Image: desired.Image, ConfigHash: desired.ConfigHash,
		Time: metav1.Time{Time: now}, Spec: desired.Spec,
	}
	d.Recheck = 0
}

// deadlineAt is when a rollout asked for at since has failed if it has not completed. The status
// keeps since to the second, rounded down: the deadline counts from the second after, so that it
// never runs out early, whichever copy of the status a pass reads.
func deadlineAt(policy appsv1alpha1.UpgradePolicy, since time.Time) time.Time {
	return since.Truncate(time.Second).Add(time.Second + time.Duration(policy.Deadline())*time.Second)
}

// failureOf is why the spec's revision, asked for since, has failed, or nil.
func failureOf(in Input, since time.Time) *appsv1alpha1.FailedRevision {
	failure := &appsv1alpha1.FailedRevision{Name: in.Desired.Name, Image: in.Desired.Image, Time: metav1.Time{Time: in.Now}}
	if p := newPodProblem(in.Pods, since); p != nil {
		failure.Reason, failure.Message = p.Reason, p.Message
		return failure
	}
	if !in.Now.Before(deadlineAt(in.Policy, since)) {
		failure.Reason = appsv1alpha1.ReasonProgressDeadline
		failure.Message = fmt.Sprintf("the pods of revision %s did not all become available within %ds", in.Desired.Name, in.Policy.Deadline())
		return failure
	}
	return nil
}

// newPodProblem is the problem of the first pod, by name, created at or after since that cannot
// run without help. An unschedulable pod may only wait for room, so it is left to the deadline.
func newPodProblem(pods []corev1.Pod, since time.Time) *conditions.PodProblem {
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	for i := range sorted {
		if IsNewPod(&sorted[i], since) {
			if p := conditions.FindPodProblem(&sorted[i]); p != nil && p.Reason != appsv1alpha1.ReasonUnschedulable {
				return p
			}
		}
	}
	return nil
}

// IsNewPod tells whether pod was created at or after since, to the second the API server keeps:
// while a rollout runs, the pods created since it began are the new revision's.
func IsNewPod(pod *corev1.Pod, since time.Time) bool {
	return !pod.CreationTimestamp.Time.Before(since.Truncate(time.Second))
}
