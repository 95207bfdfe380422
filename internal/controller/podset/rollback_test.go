package podset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

const (
	goodImage = "busybox:1.36"
	badImage  = "busybox:1.37-broken"
)

// crashLoop writes the status a kubelet would write for a pod whose container keeps exiting.
func crashLoop(t *testing.T, ns, name, backOff string) {
	t.Helper()
	pod := &corev1.Pod{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", RestartCount: 2, State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: appsv1alpha1.ReasonCrashLoopBackOff,
			Message: fmt.Sprintf("back-off %s restarting failed container=main pod=%s_%s(%s)", backOff, name, ns, pod.UID)},
	}}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

// waitRollout waits until check accepts the PodSet's rollout status and returns the PodSet.
func waitRollout(t *testing.T, ns string, check func(appsv1alpha1.RolloutStatus) error) *appsv1alpha1.PodSet {
	t.Helper()
	ps := &appsv1alpha1.PodSet{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ps); err != nil {
			return err
		}
		return check(ps.Status.Rollout)
	})
	return ps
}

// waitReason waits until the PodSet reports condType at status with reason, and returns the condition.
func waitReason(t *testing.T, ns, condType string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var c metav1.Condition
	await.Eventually(t, timeout, func(context.Context) error {
		ps := getPodSet(t, ns)
		if err := await.ConditionIs(ps.Status.Conditions, ps.Generation, condType, status); err != nil {
			return err
		}
		c = *meta.FindStatusCondition(ps.Status.Conditions, condType)
		if c.Reason != reason {
			return fmt.Errorf("%s reason %s (%s), want %s", condType, c.Reason, c.Message, reason)
		}
		return nil
	})
	return c
}

// runRevision plays the kubelet until the PodSet's pods are all of revision and ready: it makes
// each pod of revision ready as the PodSet creates it.
func runRevision(t *testing.T, ns, revision string, replicas int) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pods, err := podsOf(ctx, ns)
		if err != nil {
			return err
		}
		done := 0
		for name, pod := range pods {
			switch {
			case pod.Annotations[appsv1alpha1.AnnotationTemplateHash] != revision:
			case pod.Status.Phase != corev1.PodRunning:
				markReady(t, ns, name)
			default:
				done++
			}
		}
		if done != replicas || len(pods) != replicas {
			return fmt.Errorf("%d of %d pods run revision %s", done, len(pods), revision)
		}
		return nil
	})
}

// waitNewPod waits for a pod of revision that is not ready yet and returns its name.
func waitNewPod(t *testing.T, ns, revision string) string {
	t.Helper()
	var name string
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pods, err := podsOf(ctx, ns)
		if err != nil {
			return err
		}
		for n, pod := range pods {
			if pod.Annotations[appsv1alpha1.AnnotationTemplateHash] == revision && pod.Status.Phase == corev1.PodPending {
				name = n
				return nil
			}
		}
		return fmt.Errorf("no new pod of revision %s among %v", revision, sortedNames(pods))
	})
	return name
}

// firstRollout creates the PodSet web with three pods of goodImage and the upgrade policy, makes
// them ready and returns the revision the status records as the last good one.
func firstRollout(t *testing.T, ns string, policy appsv1alpha1.UpgradePolicy) string {
	t.Helper()
	ps := newPodSet(ns, 3, goodImage)
	ps.Spec.Upgrade = policy
	create(t, ps)
	waitPods(t, ns, "web-0", "web-1", "web-2")
	markReady(t, ns, "web-0", "web-1", "web-2")
	ps = waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.LastGood == nil || st.LastGood.Name != st.CurrentRevision || st.UpdateRevision != st.CurrentRevision || st.LastGood.Image != goodImage {
			return fmt.Errorf("rollout %+v, want the first revision the last good one", st)
		}
		return nil
	})
	if ps.Status.TemplateHash != ps.Status.Rollout.LastGood.Name {
		t.Errorf("status.templateHash %s, revision %s: want the revision named after the template hash", ps.Status.TemplateHash, ps.Status.Rollout.LastGood.Name)
	}
	return ps.Status.Rollout.LastGood.Name
}

// newRevision applies patch to the spec and returns the revision it makes, once applied.
func newRevision(t *testing.T, ns, patch, good string) string {
	t.Helper()
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	if err := k8s.Patch(context.Background(), ps, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	ps = waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.UpdateRevision == good || st.CurrentRevision != st.UpdateRevision {
			return fmt.Errorf("current/update revision %s/%s, want a new revision applied", st.CurrentRevision, st.UpdateRevision)
		}
		return nil
	})
	return ps.Status.Rollout.UpdateRevision
}

// badTemplate is a patch of a new image and a new annotation, whose pods the tests make fail.
const badTemplate = `{"spec":{"template":{"metadata":{"annotations":{"note":"changed"}},"spec":{"containers":[{"name":"main","image":"` +
	badImage + `","command":["sleep","3600"]}]}}}}`

// rollBack takes the PodSet web through a good first rollout and a new template whose first pod
// crash-loops, and waits for the rollback. It returns the failed and the good revision, and the
// pods of the good revision that kept serving throughout.
func rollBack(t *testing.T, ns string) (failed, good string, kept map[string]types.UID) {
	t.Helper()
	good = firstRollout(t, ns, appsv1alpha1.UpgradePolicy{})
	pods, err := podsOf(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	failed = newRevision(t, ns, badTemplate, good)
	crashing := waitNewPod(t, ns, failed)
	crashLoop(t, ns, crashing, "10s")
	crashed := time.Now()
	waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error { return await.RolledBack(st, failed, good, 1) })
	t.Logf("rolled back %s after the pod crash-looped", time.Since(crashed).Round(time.Millisecond))
	kept = map[string]types.UID{}
	for name, pod := range pods {
		if name != crashing {
			kept[name] = pod.UID
		}
	}
	return failed, good, kept
}

// requireKept fails the test unless the pods kept still run, untouched.
func requireKept(t *testing.T, ns string, kept map[string]types.UID) {
	t.Helper()
	pods, err := podsOf(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	for name, uid := range kept {
		if pods[name].UID != uid {
			t.Errorf("pod %s of the good revision was replaced", name)
		}
	}
}

func TestCrashLoopingRevisionIsRolledBack(t *testing.T) {
	ns := newNamespace(t)
	counted := testenv.Rollbacks(t, "PodSet")
	failed, good, kept := rollBack(t, ns)
	if len(kept) != 2 {
		t.Fatalf("%d pods of the good revision serve during the rollout, want 2 (maxUnavailable 1)", len(kept))
	}
	ps := getPodSet(t, ns)
	if img := ps.Spec.Template.Spec.Containers[0].Image; img != badImage {
		t.Errorf("spec image %s after the rollback, want the user's %s", img, badImage)
	}
	if f := ps.Status.Rollout.Failed; f.Reason != appsv1alpha1.ReasonCrashLoopBackOff || f.Image != badImage {
		t.Errorf("failed %+v", f)
	}
	degraded := waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)
	if !strings.Contains(degraded.Message, failed) || !strings.Contains(degraded.Message, good) {
		t.Errorf("Degraded %q does not name revisions %s and %s", degraded.Message, failed, good)
	}
	await.WantRolledBackEvent(t, k8s, ns, timeout, failed, good)
	if got := testenv.Rollbacks(t, "PodSet"); got != counted+1 {
		t.Errorf("appkeeper_rollouts_rolled_back_total{kind=PodSet} = %v, want %v", got, counted+1)
	}

	// The failed pod is replaced by one of the good template, the pods that served stay.
	runRevision(t, ns, good, 3)
	requireKept(t, ns, kept)
	for name, pod := range waitPods(t, ns, "web-0", "web-1", "web-2") {
		if pod.Spec.Containers[0].Image != goodImage || pod.Annotations["note"] != "kept" {
			t.Errorf("pod %s runs %s with note %q, want the good template", name, pod.Spec.Containers[0].Image, pod.Annotations["note"])
		}
	}
	waitReason(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolledBack)
	waitReason(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, appsv1alpha1.ReasonAsExpected)
	waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)
	if got := getPodSet(t, ns).Status; got.TemplateHash != good || got.UpdatedReplicas != 3 || got.Rollout.Rollbacks != 1 {
		t.Errorf("status %+v, want all 3 pods of %s after 1 rollback", got, good)
	}
	await.WaitForEvents(t, k8s, ns, timeout, func(events []eventsv1.Event) error {
		for _, e := range events {
			if e.Reason == appsv1alpha1.EventReplaced && strings.Contains(e.Note, "putting revision "+good+" back") {
				return nil
			}
		}
		return fmt.Errorf("no Replaced event of the failed pod")
	})
}

// TestRolledBackRevisionIsNotRetried checks that a rollback is final until the spec changes: the
// restored revision failing as well rolls nothing back again, and the passes it starts write
// nothing.
func TestRolledBackRevisionIsNotRetried(t *testing.T) {
	ns := newNamespace(t)
	failed, good, kept := rollBack(t, ns)
	// The pod that replaces the failed one, of the good template, crash-loops as well.
	replacement := waitNewPod(t, ns, good)
	crashLoop(t, ns, replacement, "10s")
	await.Eventually(t, timeout, func(context.Context) error {
		if st := getPodSet(t, ns).Status; st.Replicas != 3 || st.ReadyReplicas != 2 {
			return fmt.Errorf("%d pods, %d ready; want 3, 2", st.Replicas, st.ReadyReplicas)
		}
		return nil
	})

	versions := func() string {
		pods, err := podsOf(context.Background(), ns)
		if err != nil {
			t.Fatal(err)
		}
		v := []string{getPodSet(t, ns).ResourceVersion}
		for _, name := range sortedNames(pods) {
			v = append(v, name+"@"+string(pods[name].UID))
		}
		return strings.Join(v, "/")
	}
	time.Sleep(time.Second) // the status write of the crash loop settles
	before, passes := versions(), testenv.Reconciles(t, "podset")
	// The kubelet backs off longer: a new problem message starts a pass.
	crashLoop(t, ns, replacement, "20s")
	testenv.ChangesNothing(t, "podset", passes, 1, before, versions)
	requireKept(t, ns, kept)
	if err := await.RolledBack(getPodSet(t, ns).Status.Rollout, failed, good, 1); err != nil {
		t.Error(err)
	}
	await.WantRolledBackEvent(t, k8s, ns, timeout, failed, good)
}

func TestSpecChangeAfterRollbackTriesTheNewRevision(t *testing.T) {
	ns := newNamespace(t)
	failed, good, _ := rollBack(t, ns)
	runRevision(t, ns, good, 3)

	fixed := newRevision(t, ns, `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"busybox:1.37","command":["sleep","3600"]}]}}}}`, good)
	if fixed == failed {
		t.Fatalf("a new template made the failed revision %s again", fixed)
	}
	if st := getPodSet(t, ns).Status.Rollout; st.Failed != nil || st.Rollbacks != 1 || st.LastGood.Name != good {
		t.Errorf("rollout %+v while the new revision rolls out, want no failure, 1 rollback, last good %s", st, good)
	}
	runRevision(t, ns, fixed, 3)
	waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.LastGood == nil || st.LastGood.Name != fixed || st.LastGood.Image != "busybox:1.37" || st.Failed != nil || st.Rollbacks != 1 {
			return fmt.Errorf("rollout %+v, want %s the last good revision after 1 rollback", st, fixed)
		}
		return nil
	})
	waitReason(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolloutComplete)
	waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, appsv1alpha1.ReasonAsExpected)
}

func TestFailedRevisionStaysWithoutAutoRollback(t *testing.T) {
	ns := newNamespace(t)
	counted := testenv.Rollbacks(t, "PodSet")
	good := firstRollout(t, ns, appsv1alpha1.UpgradePolicy{AutoRollback: ptr.To(false)})
	bad := newRevision(t, ns, badTemplate, good)
	crashing := waitNewPod(t, ns, bad)
	crashLoop(t, ns, crashing, "10s")
	degraded := waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonCrashLoopBackOff)
	if !strings.Contains(degraded.Message, crashing) {
		t.Errorf("Degraded %q does not name the crash-looping pod %s", degraded.Message, crashing)
	}

	// The failed pod stays, and the budget of maxUnavailable keeps the two good ones serving.
	time.Sleep(2 * time.Second)
	pods, err := podsOf(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	revisions := map[string]int{}
	for _, pod := range pods {
		revisions[pod.Annotations[appsv1alpha1.AnnotationTemplateHash]]++
	}
	if len(pods) != 3 || revisions[good] != 2 || revisions[bad] != 1 {
		t.Errorf("pods by revision %v, want 2 of %s and 1 of %s", revisions, good, bad)
	}
	st := getPodSet(t, ns).Status.Rollout
	if st.Failed != nil || st.Rollbacks != 0 || st.CurrentRevision != bad || st.LastGood.Name != good {
		t.Errorf("rollout %+v, want revision %s applied and %s the last good one", st, bad, good)
	}
	await.RequireNoRolledBackEvent(t, k8s, ns)
	if got := testenv.Rollbacks(t, "PodSet"); got != counted {
		t.Errorf("appkeeper_rollouts_rolled_back_total{kind=PodSet} = %v, want %v", got, counted)
	}
}

func TestProgressDeadlineRollsBack(t *testing.T) {
	ns := newNamespace(t)
	good := firstRollout(t, ns, appsv1alpha1.UpgradePolicy{ProgressDeadlineSeconds: ptr.To[int32](10)})
	start := time.Now()
	// The new pod never turns ready.
	failed := newRevision(t, ns, badTemplate, good)
	waitNewPod(t, ns, failed)

	var took time.Duration
	ps := &appsv1alpha1.PodSet{}
	await.Eventually(t, 2*timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ps); err != nil {
			return err
		}
		took = time.Since(start)
		return await.RolledBack(ps.Status.Rollout, failed, good, 1)
	})
	t.Logf("rolled back %s after the spec change, with a deadline of 10s", took.Round(10*time.Millisecond))
	// The deadline counts from the second after the one the status keeps: never early, at most a
	// second late, plus the pass.
	if took < 10*time.Second || took > 13*time.Second {
		t.Errorf("rolled back %s after the spec change, want about 10s", took)
	}
	if f := ps.Status.Rollout.Failed; f.Reason != appsv1alpha1.ReasonProgressDeadline {
		t.Errorf("failed %+v, want reason %s", f, appsv1alpha1.ReasonProgressDeadline)
	}
	runRevision(t, ns, good, 3)
	waitReason(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolledBack)
}
