package rollout

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
)

// WedgedGrace is how long a member of an older revision may stay not Ready, with no problem the
// kubelet names, before it counts as wedged: long enough for a slow start, short enough that a
// fixed spec rolls out without a person.
const WedgedGrace = 2 * time.Minute

// WedgedMembers returns the members of sts that its controller will never replace by itself, in
// name order: a StatefulSet rolling update waits for each member to be Ready before it replaces
// it, so a member left broken by an earlier spec (crash-looping, its image not pulling, or not
// Ready past WedgedGrace) stays broken after the spec is fixed. Only members of a revision other
// than the StatefulSet's update revision qualify; a Ready member, or one on the update revision,
// never does. recheck is how long until a member still in its grace would qualify, or zero.
func WedgedMembers(sts *appsv1.StatefulSet, pods []corev1.Pod, now time.Time) (wedged []*corev1.Pod, recheck time.Duration) {
	if sts == nil || sts.Status.UpdateRevision == "" || sts.Status.ObservedGeneration < sts.Generation {
		return nil, 0
	}
	for i := range pods {
		pod := &pods[i]
		owner := metav1.GetControllerOf(pod)
		// A member without a revision label is of no known revision: it is left alone.
		revision := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
		if owner == nil || owner.UID != sts.UID || pod.DeletionTimestamp != nil || conditions.PodReady(pod) ||
			revision == "" || revision == sts.Status.UpdateRevision {
			continue
		}
		if conditions.FindPodProblem(pod) != nil {
			wedged = append(wedged, pod)
			continue
		}
		switch waited := now.Sub(notReadySince(pod)); {
		case waited >= WedgedGrace:
			wedged = append(wedged, pod)
		case recheck == 0 || WedgedGrace-waited < recheck:
			recheck = WedgedGrace - waited
		}
	}
	slices.SortFunc(wedged, func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	return wedged, recheck
}

// RolledBackMembers returns the members of sts, in name order, that a failed revision made and
// left not Ready: created at or after since, when that revision's rollout began, and of a revision
// other than the StatefulSet's update revision, which is the restored one once the StatefulSet's
// controller has seen the rollback. The StatefulSet would wait for them to become Ready before
// replacing them, and a revision that merely never turns Ready names no problem that would let
// WedgedMembers act before its grace; these need no grace, as their revision has already failed.
// A member of the update revision, such as one of the restored revision that is starting, and a
// Ready member are never returned.
func RolledBackMembers(sts *appsv1.StatefulSet, pods []corev1.Pod, since time.Time) []*corev1.Pod {
	if sts == nil || sts.Status.UpdateRevision == "" || sts.Status.ObservedGeneration < sts.Generation {
		return nil
	}
	var failed []*corev1.Pod
	for i := range pods {
		pod := &pods[i]
		owner := metav1.GetControllerOf(pod)
		revision := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
		// Creation times have whole seconds: a member created in the second the rollout began
		// counts as the failed revision's.
		if owner == nil || owner.UID != sts.UID || pod.DeletionTimestamp != nil || conditions.PodReady(pod) ||
			revision == "" || revision == sts.Status.UpdateRevision || pod.CreationTimestamp.Time.Before(since.Truncate(time.Second)) {
			continue
		}
		failed = append(failed, pod)
	}
	slices.SortFunc(failed, func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	return failed
}

// notReadySince is when the pod last stopped being Ready, or was created.
func notReadySince(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return pod.CreationTimestamp.Time
}

// WedgedDeletions remembers the wedged members deleted lately, so that a pass working from a cache
// that has not yet seen a deletion neither deletes nor reports the same pod twice. Its zero value
// is ready; it is safe for concurrent passes.
type WedgedDeletions struct {
	mu      sync.Mutex
	deleted map[types.UID]time.Time
}

// Delete deletes pod, a member WedgedMembers named, so that the StatefulSet recreates it from its
// update revision; owner, the instance, hears of it in an Event and the log, once per pod. A pod
// already gone or replaced is no error.
func (d *WedgedDeletions) Delete(ctx context.Context, c client.Client, recorder events.EventRecorder, owner client.Object, pod *corev1.Pod) error {
	why, deleted, err := d.deleteMember(ctx, c, pod)
	if !deleted {
		return err
	}
	log.FromContext(ctx).Info("deleted a member of an older revision that cannot become Ready, so that the StatefulSet recreates it from the current spec",
		"pod", pod.Name, "revision", pod.Labels[appsv1.ControllerRevisionHashLabelKey], "reason", why)
	event.WedgedPodDeleted.Emit(recorder, owner, pod,
		"deleted pod %s of an older revision so that it restarts with the current spec: %s", pod.Name, why)
	return nil
}

// DeleteRolledBack deletes pod, a member RolledBackMembers named, so that the StatefulSet
// recreates it from the restored revision; failed and restored are the instance's names of the
// two revisions, for the Event. Like Delete, it acts once per pod.
func (d *WedgedDeletions) DeleteRolledBack(ctx context.Context, c client.Client, recorder events.EventRecorder, owner client.Object, pod *corev1.Pod, failed, restored string) error {
	why, deleted, err := d.deleteMember(ctx, c, pod)
	if !deleted {
		return err
	}
	log.FromContext(ctx).Info("deleted a member of a rolled back revision, so that the StatefulSet recreates it from the restored one",
		"pod", pod.Name, "failed", failed, "restored", restored, "reason", why)
	event.WedgedPodDeleted.Emit(recorder, owner, pod,
		"deleted pod %s of the failed revision %s so that it restarts with the restored revision %s: %s", pod.Name, failed, restored, why)
	return nil
}

// deleteMember deletes pod unless this process already did; deleted tells whether this call did,
// and why is what kept the pod from becoming Ready.
func (d *WedgedDeletions) deleteMember(ctx context.Context, c client.Client, pod *corev1.Pod) (why string, deleted bool, err error) {
	if !d.claim(pod.UID) {
		return "", false, nil
	}
	why = "it is not Ready"
	if p := conditions.FindPodProblem(pod); p != nil {
		why = p.Message
	}
	deleted, err = apply.DeleteExactly(ctx, c, pod)
	if err != nil {
		d.release(pod.UID)
		return "", false, fmt.Errorf("delete wedged pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if !deleted {
		return "", false, nil
	}
	return why, true, nil
}

// claim records uid as deleted unless it already is, forgetting deletions old enough for any cache
// to have seen them.
func (d *WedgedDeletions) claim(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	for old, at := range d.deleted {
		if now.Sub(at) > 10*time.Minute {
			delete(d.deleted, old)
		}
	}
	if _, done := d.deleted[uid]; done {
		return false
	}
	if d.deleted == nil {
		d.deleted = map[types.UID]time.Time{}
	}
	d.deleted[uid] = now
	return true
}

func (d *WedgedDeletions) release(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.deleted, uid)
}
