package memcached_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

const badImage = "memcached:1.6.38-typo"

// Revisions as the StatefulSet controller names them: the good template and the failed one.
const revGood, revBad = "cache-good", "cache-bad"

// startMember plays the StatefulSet controller and the kubelet for one member: it replaces the
// pod name with one of revision, made from the StatefulSet's template, Ready, or with its
// container waiting for waiting, or, with neither, starting.
func startMember(t *testing.T, ns, name, revision string, ready bool, waiting string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	sts := get(t, ns, "cache", &appsv1.StatefulSet{})
	if err := k8s.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	labels := map[string]string{appsv1.ControllerRevisionHashLabelKey: revision}
	for k, v := range sts.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
		Spec: sts.Spec.Template.Spec,
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		// The pod deleted a moment ago may still hold the name.
		return k8s.Create(ctx, pod)
	})
	c := pod.Spec.Containers[0]
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}}
	switch {
	case ready:
		pod.Status.Conditions[0].Status = corev1.ConditionTrue
	case waiting != "":
		pod.Status.Phase = corev1.PodPending
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image, State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: waiting, Message: "cannot start " + c.Image}}}}
	}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// setRevisions writes the status of the StatefulSet as its controller would once it has seen a
// template running image: the revisions and how many members are ready and updated.
func setRevisions(t *testing.T, ns, image, current, update string, ready, updated int32) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, sts); err != nil {
			return err
		}
		if got := sts.Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("statefulset image = %s, want %s", got, image)
		}
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: *sts.Spec.Replicas,
			ReadyReplicas: ready, AvailableReplicas: ready, UpdatedReplicas: updated, CurrentReplicas: *sts.Spec.Replicas - updated,
			CurrentRevision: current, UpdateRevision: update}
		if current == update {
			sts.Status.CurrentReplicas = updated
		}
		return k8s.Status().Update(ctx, sts)
	})
}

// runningGood creates a Memcached of two members and runs them on the good revision until the
// operator records it as the last good one, which it returns.
func runningGood(t *testing.T, ns string, mutate func(*appsv1alpha1.Memcached)) string {
	t.Helper()
	createMemcached(t, ns, 2, mutate)
	childrenExist(t, ns)
	startMember(t, ns, "cache-0", revGood, true, "")
	startMember(t, ns, "cache-1", revGood, true, "")
	setRevisions(t, ns, appsv1alpha1.DefaultMemcachedImage, revGood, revGood, 2, 2)
	mc := waitMemcached(t, ns, func(mc *appsv1alpha1.Memcached) error {
		if mc.Status.Rollout.LastGood == nil {
			return errors.New("no last good revision yet")
		}
		return await.ConditionIs(mc.Status.Conditions, mc.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	})
	return mc.Status.Rollout.LastGood.Name
}

// upgradeTo changes the image to image and plays the StatefulSet controller's first step: it
// replaces the last member with one of the new revision, in the state newMember gives it.
func upgradeTo(t *testing.T, ns, image string, newMember func(name string) *corev1.Pod) *corev1.Pod {
	t.Helper()
	patch(t, ns, fmt.Sprintf(`{"spec":{"image":%q}}`, image))
	setRevisions(t, ns, image, revGood, revBad, 1, 0)
	return newMember("cache-1")
}

func patch(t *testing.T, ns, body string) {
	t.Helper()
	mc := &appsv1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns}}
	if err := k8s.Patch(context.Background(), mc, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		t.Fatal(err)
	}
}

func waitMemcached(t *testing.T, ns string, check func(*appsv1alpha1.Memcached) error) *appsv1alpha1.Memcached {
	t.Helper()
	mc := &appsv1alpha1.Memcached{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
			return err
		}
		return check(mc)
	})
	return mc
}

// degradedIs checks Degraded's status and reason for the current generation.
func degradedIs(status metav1.ConditionStatus, reason string) func(*appsv1alpha1.Memcached) error {
	return func(mc *appsv1alpha1.Memcached) error {
		if err := await.ConditionIs(mc.Status.Conditions, mc.Generation, appsv1alpha1.ConditionDegraded, status); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionDegraded); c.Reason != reason {
			return fmt.Errorf("Degraded reason = %s (%s), want %s", c.Reason, c.Message, reason)
		}
		return nil
	}
}

func stsImage(t *testing.T, ns string) string {
	t.Helper()
	return get(t, ns, "cache", &appsv1.StatefulSet{}).Spec.Template.Spec.Containers[0].Image
}

// holds requires check to pass again and again for d.
func holds(t *testing.T, d time.Duration, check func() error) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err := check(); err != nil {
			t.Fatal(err)
		}
	}
}

func gone(t *testing.T, pod *corev1.Pod, within time.Duration) {
	t.Helper()
	await.Eventually(t, within, func(ctx context.Context) error {
		got := &corev1.Pod{}
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), got)
		switch {
		case apierrors.IsNotFound(err) || err == nil && got.UID != pod.UID:
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("pod %s of the failed revision is still there", pod.Name)
	})
}

func TestFailedImageIsRolledBack(t *testing.T) {
	ns := newNamespace(t)
	good := runningGood(t, ns, nil)
	serving := get(t, ns, "cache-0", &corev1.Pod{})
	failed := upgradeTo(t, ns, badImage, func(name string) *corev1.Pod {
		return startMember(t, ns, name, revBad, false, appsv1alpha1.ReasonImagePullBackOff)
	})

	mc := waitMemcached(t, ns, degradedIs(metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack))
	ro := mc.Status.Rollout
	if ro.Failed == nil || ro.Failed.Image != badImage || ro.Failed.Reason != appsv1alpha1.ReasonImagePullBackOff ||
		ro.Failed.Name != ro.UpdateRevision || ro.Failed.Name == good {
		t.Errorf("status.rollout.failed = %+v, want the revision of %s (%s), failed with ImagePullBackOff", ro.Failed, badImage, ro.UpdateRevision)
	}
	if ro.CurrentRevision != good || ro.LastGood == nil || ro.LastGood.Name != good || ro.Rollbacks != 1 {
		t.Errorf("status.rollout current/lastGood/rollbacks = %s/%+v/%d, want %s/%s/1", ro.CurrentRevision, ro.LastGood, ro.Rollbacks, good, good)
	}
	if mc.Spec.Image != badImage {
		t.Errorf("spec.image = %s, want it as the user wrote it, %s", mc.Spec.Image, badImage)
	}
	if err := await.ConditionIs(mc.Status.Conditions, mc.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue); err != nil {
		t.Errorf("the other member serves throughout: %v", err)
	}
	if image := stsImage(t, ns); image != appsv1alpha1.DefaultMemcachedImage {
		t.Errorf("statefulset image = %s, want the last good %s back", image, appsv1alpha1.DefaultMemcachedImage)
	}
	await.WaitForEvents(t, k8s, ns, timeout, func(events []eventsv1.Event) error {
		for _, e := range events {
			if e.Reason == appsv1alpha1.EventRolledBack && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Note, ro.Failed.Name) && strings.Contains(e.Note, good) {
				return nil
			}
		}
		return errors.New("no Warning RolledBack naming both revisions")
	})

	// The StatefulSet's controller sees the restored template as its update revision: the failed
	// member goes at once, the serving one stays.
	setRevisions(t, ns, appsv1alpha1.DefaultMemcachedImage, revGood, revGood, 1, 1)
	gone(t, failed, 5*time.Second)
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventWedgedPodDeleted)
	if got := get(t, ns, "cache-0", &corev1.Pod{}); got.UID != serving.UID {
		t.Errorf("the serving member cache-0 was replaced")
	}

	// Its replacement of the restored revision, starting, is left to start; then the rollback is over.
	restored := startMember(t, ns, "cache-1", revGood, false, "")
	holds(t, time.Second, func() error {
		if got := get(t, ns, "cache-1", &corev1.Pod{}); got.UID != restored.UID {
			return errors.New("the starting member of the restored revision was deleted")
		}
		return nil
	})
	startMember(t, ns, "cache-1", revGood, true, "")
	setRevisions(t, ns, appsv1alpha1.DefaultMemcachedImage, revGood, revGood, 2, 2)
	mc = waitMemcached(t, ns, func(mc *appsv1alpha1.Memcached) error {
		c := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionProgressing)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != appsv1alpha1.ReasonRolledBack {
			return fmt.Errorf("Progressing = %+v, want False RolledBack", c)
		}
		return degradedIs(metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)(mc)
	})
	if mc.Status.Rollout.LastGood.Name != good || mc.Status.Rollout.Rollbacks != 1 {
		t.Errorf("status.rollout = %+v, want the last good revision %s and one rollback", mc.Status.Rollout, good)
	}
}

// TestRestoredRevisionFailingIsNotRolledBackAgain: once rolled back, the failed revision is not
// tried again, and a failure of the restored one neither rolls back again nor replaces its member.
func TestRestoredRevisionFailingIsNotRolledBackAgain(t *testing.T) {
	ns := newNamespace(t)
	good := runningGood(t, ns, nil)
	upgradeTo(t, ns, badImage, func(name string) *corev1.Pod {
		return startMember(t, ns, name, revBad, false, appsv1alpha1.ReasonCrashLoopBackOff)
	})
	waitMemcached(t, ns, degradedIs(metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack))
	setRevisions(t, ns, appsv1alpha1.DefaultMemcachedImage, revGood, revGood, 1, 1)
	crashing := startMember(t, ns, "cache-1", revGood, false, appsv1alpha1.ReasonCrashLoopBackOff)

	holds(t, 3*time.Second, func() error {
		mc := get(t, ns, "cache", &appsv1alpha1.Memcached{})
		ro := mc.Status.Rollout
		switch {
		case ro.Rollbacks != 1 || ro.CurrentRevision != good:
			return fmt.Errorf("status.rollout rollbacks/current = %d/%s, want 1/%s", ro.Rollbacks, ro.CurrentRevision, good)
		case stsImage(t, ns) != appsv1alpha1.DefaultMemcachedImage:
			return fmt.Errorf("statefulset image = %s: the failed revision was tried again", stsImage(t, ns))
		case get(t, ns, "cache-1", &corev1.Pod{}).UID != crashing.UID:
			return errors.New("the member of the restored revision was replaced")
		}
		return nil
	})
}

func TestSpecChangeAfterRollbackTriesTheNewRevision(t *testing.T) {
	ns := newNamespace(t)
	runningGood(t, ns, nil)
	failedMember := upgradeTo(t, ns, badImage, func(name string) *corev1.Pod {
		return startMember(t, ns, name, revBad, false, appsv1alpha1.ReasonImagePullBackOff)
	})
	rolledBack := waitMemcached(t, ns, degradedIs(metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack))
	failed := rolledBack.Status.Rollout.Failed.Name
	setRevisions(t, ns, appsv1alpha1.DefaultMemcachedImage, revGood, revGood, 1, 1)
	gone(t, failedMember, 5*time.Second)
	// Creation times have whole seconds: a person fixes the spec later than the second the
	// failed member was made, which would otherwise count as the new revision's.
	time.Sleep(time.Second)

	const fixed = "memcached:1.6.39-alpine"
	patch(t, ns, fmt.Sprintf(`{"spec":{"image":%q}}`, fixed))
	await.Eventually(t, timeout, func(context.Context) error {
		if image := stsImage(t, ns); image != fixed {
			return fmt.Errorf("statefulset image = %s, want %s", image, fixed)
		}
		return nil
	})
	mc := waitMemcached(t, ns, func(mc *appsv1alpha1.Memcached) error {
		ro := mc.Status.Rollout
		if ro.Failed != nil || ro.UpdateRevision == failed || ro.CurrentRevision != ro.UpdateRevision {
			return fmt.Errorf("status.rollout = %+v, want the new revision under way and no failed one", ro)
		}
		if c := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionDegraded); c == nil || c.Reason == appsv1alpha1.ReasonRolledBack {
			return fmt.Errorf("Degraded = %+v, want it no longer RolledBack", c)
		}
		return nil
	})
	if mc.Status.Rollout.Rollbacks != 1 {
		t.Errorf("status.rollout.rollbacks = %d, want 1", mc.Status.Rollout.Rollbacks)
	}
}

func TestAutoRollbackOffKeepsTheFailedRevision(t *testing.T) {
	ns := newNamespace(t)
	runningGood(t, ns, func(mc *appsv1alpha1.Memcached) { mc.Spec.Upgrade.AutoRollback = ptr.To(false) })
	upgradeTo(t, ns, badImage, func(name string) *corev1.Pod {
		return startMember(t, ns, name, revBad, false, appsv1alpha1.ReasonImagePullBackOff)
	})
	mc := waitMemcached(t, ns, degradedIs(metav1.ConditionTrue, appsv1alpha1.ReasonImagePullBackOff))
	if c := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionDegraded); !strings.Contains(c.Message, "cache-1") {
		t.Errorf("Degraded message = %q, want it to name the failing member", c.Message)
	}
	holds(t, 2*time.Second, func() error {
		mc := get(t, ns, "cache", &appsv1alpha1.Memcached{})
		if ro := mc.Status.Rollout; ro.Failed != nil || ro.Rollbacks != 0 || ro.CurrentRevision != ro.UpdateRevision {
			return fmt.Errorf("status.rollout = %+v, want the spec's revision kept and no rollback", ro)
		}
		if image := stsImage(t, ns); image != badImage {
			return fmt.Errorf("statefulset image = %s, want the spec's %s", image, badImage)
		}
		return nil
	})
}

// TestMembersThatNeverTurnReadyAreRolledBackAtTheDeadline: no member reports a problem, but the
// new revision does not become available in time; once rolled back, its member goes at once,
// not after the grace a wedged member gets.
func TestMembersThatNeverTurnReadyAreRolledBackAtTheDeadline(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	runningGood(t, ns, func(mc *appsv1alpha1.Memcached) { mc.Spec.Upgrade.ProgressDeadlineSeconds = ptr.To[int32](10) })
	started := time.Now()
	failed := upgradeTo(t, ns, "memcached:1.6.39-alpine", func(name string) *corev1.Pod {
		return startMember(t, ns, name, revBad, false, "")
	})
	mc := &appsv1alpha1.Memcached{}
	await.Eventually(t, 10*time.Second+timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
			return err
		}
		return degradedIs(metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)(mc)
	})
	if waited := time.Since(started); waited < 9*time.Second {
		t.Errorf("rolled back after %s, before the deadline of 10s", waited)
	}
	if f := mc.Status.Rollout.Failed; f == nil || f.Reason != appsv1alpha1.ReasonProgressDeadline {
		t.Errorf("status.rollout.failed = %+v, want ProgressDeadlineExceeded", f)
	}
	t.Logf("rolled back %s after the image change", time.Since(started).Round(time.Millisecond))
	observed := time.Now()
	setRevisions(t, ns, appsv1alpha1.DefaultMemcachedImage, revGood, revGood, 1, 1)
	gone(t, failed, 5*time.Second)
	t.Logf("the failed member went %s after the StatefulSet showed the restored revision", time.Since(observed).Round(time.Millisecond))
}

func TestMembersAreReplacedOneAtATime(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 3, nil)
	sts, _ := childrenExist(t, ns)
	s := sts.Spec.UpdateStrategy
	if s.Type != appsv1.RollingUpdateStatefulSetStrategyType || s.RollingUpdate == nil ||
		(s.RollingUpdate.MaxUnavailable != nil && s.RollingUpdate.MaxUnavailable.IntValue() != 1) || ptr.Deref(s.RollingUpdate.Partition, 0) != 0 {
		t.Errorf("update strategy = %+v, want a rolling update of one member at a time", s)
	}
}
