//go:build real

package real

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/internal/rollout"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

// workload is the Deployment or StatefulSet that runs an instance's pods.
type workload struct {
	list     client.ObjectList
	name     string
	template func(client.Object) corev1.PodTemplateSpec
}

func deploymentOf(name string) workload {
	return workload{list: &appsv1.DeploymentList{}, name: name,
		template: func(o client.Object) corev1.PodTemplateSpec { return o.(*appsv1.Deployment).Spec.Template }}
}

func statefulSetOf(name string) workload {
	return workload{list: &appsv1.StatefulSetList{}, name: name,
		template: func(o client.Object) corev1.PodTemplateSpec { return o.(*appsv1.StatefulSet).Spec.Template }}
}

// episode follows one failed upgrade of an instance from outside, as its users and its operator's
// operator would see it: a client asks its Service every 100 ms, and watches of its pods and its
// workload mark when the first pod of the new revision failed and when the workload's pod template
// was put back as it was before the upgrade. Watches rather than polls: the failed pod may be
// gone within a second of the rollback.
type episode struct {
	kind     string
	client   *poller
	began    time.Time
	original corev1.PodTemplateSpec
	stopped  chan struct{}
	cancel   context.CancelFunc
	// logs is the reading of the failed pod's output.
	logs sync.WaitGroup

	mu sync.Mutex
	// failedPod is the first pod of the new revision seen failing, at failedAt, with its
	// container's output then.
	failedPod, failedOutput   string
	failedAt                  time.Time
	changedAt, restoredAt     time.Time
	changedAgain              bool
	availableAt, settledUntil time.Time
}

// startEpisode records the workload's template, starts the client and the watches, and returns:
// the caller changes the spec right after.
func startEpisode(t *testing.T, kind, ns string, pods map[string]string, w workload, probe func(context.Context) error) *episode {
	t.Helper()
	watcher, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.List(context.Background(), w.list, client.InNamespace(ns), client.MatchingFields{"metadata.name": w.name}); err != nil {
		t.Fatal(err)
	}
	objs, err := itemsOf(w.list)
	if err != nil || len(objs) != 1 {
		t.Fatalf("workload %s: %v, %d found", w.name, err, len(objs))
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &episode{kind: kind, original: w.template(objs[0]), cancel: cancel, stopped: make(chan struct{})}
	var watches sync.WaitGroup
	watches.Go(func() {
		watchEach(ctx, watcher, &corev1.PodList{}, []client.ListOption{client.InNamespace(ns), client.MatchingLabels(pods)},
			func(o client.Object) { e.seePod(ns, o.(*corev1.Pod)) })
	})
	watches.Go(func() {
		watchEach(ctx, watcher, w.list, []client.ListOption{client.InNamespace(ns), client.MatchingFields{"metadata.name": w.name}},
			func(o client.Object) { e.seeTemplate(w.template(o)) })
	})
	go func() { watches.Wait(); close(e.stopped) }()
	e.client = startProbing(100*time.Millisecond, probe)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.began = time.Now()
	return e
}

// watchEach hands every object of every event of a watch of list to see until ctx ends, watching
// again when the API server ends a watch.
func watchEach(ctx context.Context, c client.WithWatch, list client.ObjectList, opts []client.ListOption, see func(client.Object)) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, list, opts...)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			if o, ok := ev.Object.(client.Object); ok {
				see(o)
			}
		}
		w.Stop()
	}
}

func itemsOf(list client.ObjectList) ([]client.Object, error) {
	var objs []client.Object
	switch l := list.(type) {
	case *appsv1.DeploymentList:
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
		}
	case *appsv1.StatefulSetList:
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("no workload list: %T", list)
	}
	return objs, nil
}

// seePod marks the first pod created since the upgrade whose container failed: it exited with an
// error, or waits for a reason time alone will not clear. Its output is read at once, while the
// pod is still there.
func (e *episode) seePod(ns string, pod *corev1.Pod) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.began.IsZero() || !e.failedAt.IsZero() || !rollout.IsNewPod(pod, e.began) {
		return
	}
	for _, cs := range pod.Status.ContainerStatuses {
		state := cs.State.Terminated
		if state == nil {
			state = cs.LastTerminationState.Terminated
		}
		problem := conditions.FindPodProblem(pod)
		if (state == nil || state.ExitCode == 0) && problem == nil {
			continue
		}
		e.failedAt, e.failedPod = time.Now(), pod.Name
		if state == nil {
			// The container never ran, so it wrote nothing: the kubelet says why.
			e.failedOutput = problem.Message
			return
		}
		e.logs.Go(func() {
			out := failedOutput(ns, pod.Name, cs.Name)
			e.mu.Lock()
			defer e.mu.Unlock()
			e.failedOutput = out
		})
		return
	}
}

// failedOutput is the last lines a failed container wrote. The kubelet restarts a failed container
// at once the first time, and the restarted one may still be starting: the output read is that
// of the previous container, which has ended, once the kubelet has one, within a few seconds
// while the pod is still there; else the current container's.
func failedOutput(ns, pod, container string) string {
	logs := func(previous bool) (string, error) {
		out, err := runKubectl("", "logs", "-n", ns, pod, "-c", container, "--tail=3", "--previous="+strconv.FormatBool(previous))
		return strings.TrimSpace(out), err
	}
	var previous string
	if wait.ExponentialBackoff(wait.Backoff{Duration: 200 * time.Millisecond, Steps: 15}, func() (bool, error) {
		out, err := logs(true)
		previous = out
		return err == nil && out != "", nil
	}) == nil {
		return previous
	}
	out, err := logs(false)
	if err != nil {
		return "(its output could not be read: " + out + ")"
	}
	return out
}

// seeTemplate marks when the template first differs from the one before the upgrade, and when it
// is that one again; a change after that is a second rollout, which must not happen.
func (e *episode) seeTemplate(tpl corev1.PodTemplateSpec) {
	e.mu.Lock()
	defer e.mu.Unlock()
	same := equality.Semantic.DeepEqual(tpl, e.original)
	switch {
	case e.began.IsZero():
	case e.changedAt.IsZero() && !same:
		e.changedAt = time.Now()
	case !e.changedAt.IsZero() && e.restoredAt.IsZero() && same:
		e.restoredAt = time.Now()
	case !e.restoredAt.IsZero() && !same:
		e.changedAgain = true
	}
}

// waitRolledBack waits until a pod of the new revision failed and the template was put back.
func (e *episode) waitRolledBack(t *testing.T, deadline time.Duration) {
	t.Helper()
	await.Eventually(t, deadline+time.Minute, func(context.Context) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		switch {
		case e.failedAt.IsZero():
			return fmt.Errorf("no pod of the new revision failed yet (template changed: %t)", !e.changedAt.IsZero())
		case e.restoredAt.IsZero():
			return fmt.Errorf("pod %s failed; the template is not back yet", e.failedPod)
		}
		return nil
	})
}

// waitAvailable waits, once the template is back, until the instance is Available and settled,
// then keeps the client asking for settle more, so that a failure after recovery would count.
func (e *episode) waitAvailable(t *testing.T, ns, name string, settle time.Duration) {
	t.Helper()
	waitAvailable(t, ns, e.kind, name, e.began)
	e.mu.Lock()
	e.availableAt = time.Now()
	e.mu.Unlock()
	time.Sleep(settle)
	e.settledUntil = time.Now()
}

// finish stops the client and the watches, logs the episode in one line and returns the failed
// requests and how long, from the first to the last, they went on failing.
func (e *episode) finish(t *testing.T) (failures []string, outage time.Duration) {
	t.Helper()
	ok, failures, _ := e.client.stop()
	e.cancel()
	<-e.stopped
	e.logs.Wait()
	first, last := e.client.firstFailure, e.client.lastFailure
	if !first.IsZero() {
		outage = last.Sub(first)
	}
	seconds := func(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
	t.Logf("rollback %s: failed requests %d/%d, to rollback %s, to available %s (first pod failed %s after the spec change; failed requests for %s)",
		e.kind, len(failures), ok+len(failures), seconds(e.restoredAt.Sub(e.failedAt)), seconds(e.availableAt.Sub(e.failedAt)),
		seconds(e.failedAt.Sub(e.began)), seconds(outage))
	t.Logf("pod %s failed with: %s", e.failedPod, e.failedOutput)
	if len(failures) > 0 {
		t.Logf("failed requests:\n%s", strings.Join(boundedLines(failures, 10), "\n"))
	}
	if e.changedAgain {
		t.Errorf("the %s's pod template changed again after the rollback, before %s", e.kind, e.settledUntil.Format(time.StampMilli))
	}
	return failures, outage
}

// boundedLines keeps the first and last n/2 lines of a long list.
func boundedLines(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	out := append([]string{}, lines[:n/2]...)
	out = append(out, fmt.Sprintf("… %d more …", len(lines)-n))
	return append(out, lines[len(lines)-n/2:]...)
}

// rollback is what the status of an instance tells after a rollback: its count, and the
// failure's reason (one of reasons), from the failed image back to the good one.
type rollback struct {
	count                  int32
	reasons                []string
	failedImage, goodImage string
}

// rolledBack requires the instance's status to tell of want and Degraded=True RolledBack, a
// RolledBack Event naming both revisions, and the kind's counter one up from before; it returns
// the rollout status.
func rolledBack(t *testing.T, ns, kind, name string, before float64, want rollback) appsv1alpha1.RolloutStatus {
	t.Helper()
	st, conditions, generation := instanceStatus(t, ns, kind, name)
	if err := await.ConditionIs(conditions, generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
		t.Errorf("%s %s: %v", kind, name, err)
	} else if c := findCondition(conditions, appsv1alpha1.ConditionDegraded); c.Reason != appsv1alpha1.ReasonRolledBack {
		t.Errorf("Degraded reason %s (%s), want RolledBack", c.Reason, c.Message)
	}
	f, good := st.Failed, st.LastGood
	switch {
	case f == nil || good == nil:
		t.Fatalf("status.rollout %+v: no failed or last good revision", st)
	case f.Name != st.UpdateRevision || f.Image != want.failedImage || !slices.Contains(want.reasons, f.Reason):
		t.Errorf("status.rollout.failed %+v, want revision %s of %s, one of %v", *f, st.UpdateRevision, want.failedImage, want.reasons)
	case st.CurrentRevision != good.Name || good.Image != want.goodImage || good.Name == f.Name || st.Rollbacks != want.count:
		t.Errorf("status.rollout: current %s, last good %s (%s), rollbacks %d; want the last good revision of %s, rollbacks %d",
			st.CurrentRevision, good.Name, good.Image, st.Rollbacks, want.goodImage, want.count)
	}
	// One Event per rollback: this one names the revision that failed this time.
	await.WaitForEvents(t, k8s, ns, 10*time.Second, func(events []eventsv1.Event) error {
		for _, ev := range events {
			if ev.Reason != appsv1alpha1.EventRolledBack || ev.Regarding.Kind != kind || ev.Regarding.Name != name || !strings.Contains(ev.Note, f.Name) {
				continue
			}
			if ev.Type != corev1.EventTypeWarning || !strings.Contains(ev.Note, good.Name) {
				return fmt.Errorf("RolledBack event %q (%s) does not name the restored revision %s", ev.Note, ev.Type, good.Name)
			}
			t.Logf("Event %s: %s", ev.Reason, ev.Note)
			return nil
		}
		return fmt.Errorf("no RolledBack event for %s %s naming revision %s", kind, name, f.Name)
	})
	if after := testenv.Rollbacks(t, kind); after != before+1 {
		t.Errorf("appkeeper_rollouts_rolled_back_total{kind=%q} went from %v to %v, want one more", kind, before, after)
	}
	return st
}

// instanceStatus reads the rollout status, conditions and generation of an appkeeper resource.
func instanceStatus(t *testing.T, ns, kind, name string) (appsv1alpha1.RolloutStatus, []metav1.Condition, int64) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind(kind))
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	var status struct {
		Rollout    appsv1alpha1.RolloutStatus `json:"rollout"`
		Conditions []metav1.Condition         `json:"conditions"`
	}
	raw, _, _ := unstructured.NestedMap(obj.Object, "status")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status); err != nil {
		t.Fatal(err)
	}
	return status.Rollout, status.Conditions, obj.GetGeneration()
}

func findCondition(conditions []metav1.Condition, condType string) metav1.Condition {
	for _, c := range conditions {
		if c.Type == condType {
			return c
		}
	}
	return metav1.Condition{}
}
