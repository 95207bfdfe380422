package rollout

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
)

var (
	start = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	good  = &appsv1alpha1.GoodRevision{Name: "good", Image: "nginx:1.27", Time: metav1.Time{Time: start.Add(-time.Hour)},
		Spec: Snapshot(map[string]string{"image": "nginx:1.27"})}
	bad = Revision{Name: "bad", Image: "nginx:broken", Spec: Snapshot(map[string]string{"image": "nginx:broken"})}
)

// rollingOut is the status of a rollout of bad, asked for at start, from good.
func rollingOut() appsv1alpha1.RolloutStatus {
	return appsv1alpha1.RolloutStatus{CurrentRevision: "bad", UpdateRevision: "bad",
		UpdateTime: &metav1.Time{Time: start}, LastGood: good.DeepCopy()}
}

func rolledBack() appsv1alpha1.RolloutStatus {
	st := rollingOut()
	st.CurrentRevision = "good"
	st.Failed = &appsv1alpha1.FailedRevision{Name: "bad", Image: "nginx:broken", Reason: appsv1alpha1.ReasonCrashLoopBackOff,
		Time: metav1.Time{Time: start.Add(time.Minute)}}
	st.Rollbacks = 1
	return st
}

// pod is a pod created at created, crash-looping when crashing.
func pod(name string, created time.Time, waiting string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Time{Time: created}}}
	if waiting != "" {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting, Message: "back-off"}}}}
	}
	return p
}

func unschedulable(name string, created time.Time) corev1.Pod {
	p := pod(name, created, "")
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available"}}
	return p
}

func TestDecide(t *testing.T) {
	off := appsv1alpha1.UpgradePolicy{AutoRollback: ptr.To(false)}
	short := appsv1alpha1.UpgradePolicy{ProgressDeadlineSeconds: ptr.To[int32](30)}
	type want struct {
		current    string
		rollBack   bool
		rolledBack string // reason of the failure rolled back by this pass
		stalled    string // reason of the failure left in place
		recheck    time.Duration
		rollbacks  int32
		failed     string // status.rollout.failed.name
		started    bool   // a rollout to count
	}
	tests := []struct {
		name   string
		policy appsv1alpha1.UpgradePolicy
		status appsv1alpha1.RolloutStatus
		pods   []corev1.Pod
		now    time.Time
		want   want
	}{
		{name: "first revision, nothing to go back to, even crash-looping",
			status: appsv1alpha1.RolloutStatus{}, pods: []corev1.Pod{pod("a", start, appsv1alpha1.ReasonCrashLoopBackOff)},
			now: start.Add(time.Hour), want: want{current: "bad"}},
		{name: "a new revision starts: the deadline runs from now",
			status: appsv1alpha1.RolloutStatus{CurrentRevision: "good", UpdateRevision: "good", LastGood: good.DeepCopy()},
			now:    start, want: want{current: "bad", recheck: 601 * time.Second, started: true}},
		{name: "rolling out within the deadline",
			status: rollingOut(), pods: []corev1.Pod{pod("old", start.Add(-time.Hour), ""), pod("new", start.Add(time.Second), "")},
			now: start.Add(100 * time.Second), want: want{current: "bad", recheck: 501 * time.Second}},
		{name: "a new pod crash-loops: rolled back at once",
			status: rollingOut(), pods: []corev1.Pod{pod("new", start.Add(time.Second), appsv1alpha1.ReasonCrashLoopBackOff)},
			now:  start.Add(20 * time.Second),
			want: want{current: "good", rollBack: true, rolledBack: appsv1alpha1.ReasonCrashLoopBackOff, rollbacks: 1, failed: "bad"}},
		{name: "a new pod cannot pull its image",
			status: rollingOut(), pods: []corev1.Pod{pod("new", start, appsv1alpha1.ReasonImagePullBackOff)},
			now:  start.Add(5 * time.Second),
			want: want{current: "good", rollBack: true, rolledBack: appsv1alpha1.ReasonImagePullBackOff, rollbacks: 1, failed: "bad"}},
		{name: "an old pod's problem is not the new revision's",
			status: rollingOut(), pods: []corev1.Pod{pod("old", start.Add(-time.Minute), appsv1alpha1.ReasonCrashLoopBackOff)},
			now: start.Add(5 * time.Second), want: want{current: "bad", recheck: 596 * time.Second}},
		{name: "an unschedulable new pod waits for the deadline",
			status: rollingOut(), pods: []corev1.Pod{unschedulable("new", start)},
			now: start.Add(5 * time.Second), want: want{current: "bad", recheck: 596 * time.Second}},
		{name: "the deadline, counted from the second after the one the status keeps, has not passed",
			policy: short, status: rollingOut(), now: start.Add(30 * time.Second), want: want{current: "bad", recheck: time.Second}},
		{name: "the deadline passes",
			policy: short, status: rollingOut(), pods: []corev1.Pod{pod("new", start, "")},
			now:  start.Add(31 * time.Second),
			want: want{current: "good", rollBack: true, rolledBack: appsv1alpha1.ReasonProgressDeadline, rollbacks: 1, failed: "bad"}},
		{name: "automatic rollback off: the failure stays in place",
			policy: off, status: rollingOut(), pods: []corev1.Pod{pod("new", start, appsv1alpha1.ReasonCrashLoopBackOff)},
			now: start.Add(5 * time.Second), want: want{current: "bad", stalled: appsv1alpha1.ReasonCrashLoopBackOff}},
		{name: "rolled back: stays so, without a second rollback, whatever the restored pods do",
			status: rolledBack(), pods: []corev1.Pod{pod("restored", start.Add(2*time.Minute), appsv1alpha1.ReasonCrashLoopBackOff)},
			now: start.Add(time.Hour), want: want{current: "good", rollBack: true, rollbacks: 1, failed: "bad"}},
		{name: "rolled back, then a spec change: the new revision gets its chance",
			status: rolledBack(), now: start.Add(time.Hour), want: want{current: "fixed", rollbacks: 1, recheck: 601 * time.Second, started: true}},
		{name: "rolled back, then the spec goes back to the good revision",
			status: rolledBack(), now: start.Add(time.Hour), want: want{current: "good", rollbacks: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desired := bad
			switch {
			case strings.Contains(tt.name, "spec change"):
				desired = Revision{Name: "fixed", Image: "nginx:1.28"}
			case strings.Contains(tt.name, "back to the good"):
				desired = Revision{Name: "good", Image: "nginx:1.27"}
			}
			d := Decide(Input{Policy: tt.policy, Status: tt.status, Desired: desired, Pods: tt.pods, Now: tt.now})
			got := want{current: d.Status.CurrentRevision, rollBack: d.RollBack, recheck: d.Recheck, rollbacks: d.Status.Rollbacks, started: d.Started}
			if d.RolledBack != nil {
				got.rolledBack = d.RolledBack.Reason
			}
			if d.Stalled != nil {
				got.stalled = d.Stalled.Reason
			}
			if d.Status.Failed != nil {
				got.failed = d.Status.Failed.Name
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if d.Status.UpdateRevision != desired.Name {
				t.Errorf("updateRevision %q, want %q", d.Status.UpdateRevision, desired.Name)
			}
		})
	}
}

func TestDecideIsIdle(t *testing.T) {
	// Passes that see nothing new leave the status as it was: an idle operator writes nothing.
	for _, st := range []appsv1alpha1.RolloutStatus{rolledBack(),
		{CurrentRevision: "bad", UpdateRevision: "bad", UpdateTime: &metav1.Time{Time: start}, LastGood: &appsv1alpha1.GoodRevision{Name: "bad", Time: metav1.Time{Time: start}}}} {
		d := Decide(Input{Status: st, Desired: bad, Now: start.Add(time.Hour)})
		if !equality.Semantic.DeepEqual(d.Status, st) {
			t.Errorf("status changed:\n%+v\nto\n%+v", st, d.Status)
		}
	}
}

func TestComplete(t *testing.T) {
	d := Decide(Input{Status: rollingOut(), Desired: bad, Now: start.Add(time.Minute)})
	d.Complete(bad, start.Add(time.Minute))
	if lg := d.Status.LastGood; lg == nil || lg.Name != "bad" || lg.Image != "nginx:broken" || string(lg.Spec.Raw) != string(bad.Spec.Raw) ||
		!lg.Time.Equal(&metav1.Time{Time: start.Add(time.Minute)}) || d.Recheck != 0 || !d.Completed {
		t.Errorf("last good %+v, recheck %v, completed %v", lg, d.Recheck, d.Completed)
	}

	// A new instance's first revision completes no rollout.
	d = Decide(Input{Desired: bad, Now: start})
	if d.Complete(bad, start); d.Status.LastGood == nil || d.Completed {
		t.Errorf("last good %+v, completed %v after the first revision", d.Status.LastGood, d.Completed)
	}

	// A rolled back pass completes the last good revision, which stays as it was.
	d = Decide(Input{Status: rolledBack(), Desired: bad, Now: start.Add(time.Hour)})
	d.Complete(bad, start.Add(time.Hour))
	if d.Status.LastGood.Name != "good" || !d.Status.LastGood.Time.Equal(&good.Time) || d.Completed {
		t.Errorf("last good %+v, completed %v after a rolled back pass", d.Status.LastGood, d.Completed)
	}
}

func TestTarget(t *testing.T) {
	type spec struct {
		Image    string `json:"image"`
		Replicas int    `json:"replicas"`
	}
	podFields := func(into, good *spec) { into.Image = good.Image }
	current := spec{Image: "nginx:broken", Replicas: 5}

	d := Decide(Input{Status: rolledBack(), Desired: bad, Now: start})
	d.Status.LastGood.Spec = Snapshot(spec{Image: "nginx:1.27", Replicas: 2})
	got, err := Target(d, current, podFields)
	if err != nil || got != (spec{Image: "nginx:1.27", Replicas: 5}) {
		t.Errorf("rolled back target = %+v, %v; want the good image at the spec's replicas", got, err)
	}
	if current.Image != "nginx:broken" {
		t.Error("the spec itself changed")
	}

	d = Decide(Input{Status: rollingOut(), Desired: bad, Now: start})
	if got, err := Target(d, current, podFields); err != nil || got != current {
		t.Errorf("target = %+v, %v; want the spec", got, err)
	}
}

func TestConditions(t *testing.T) {
	d := Decide(Input{Status: rollingOut(), Desired: bad, Pods: []corev1.Pod{pod("new", start, appsv1alpha1.ReasonCrashLoopBackOff)}, Now: start.Add(time.Second)})
	degraded := d.Degraded(conditions.Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected}, nil)
	if !degraded.IsTrue() || degraded.Reason != appsv1alpha1.ReasonRolledBack ||
		!strings.Contains(degraded.Message, "revision bad (nginx:broken) failed") || !strings.Contains(degraded.Message, "rolled back to revision good (nginx:1.27)") {
		t.Errorf("Degraded = %+v", degraded)
	}
	progressing := d.Progressing(conditions.Condition{Type: appsv1alpha1.ConditionProgressing, Reason: appsv1alpha1.ReasonRolloutComplete})
	if progressing.IsTrue() || progressing.Reason != appsv1alpha1.ReasonRolledBack {
		t.Errorf("Progressing = %+v", progressing)
	}

	off := Decide(Input{Policy: appsv1alpha1.UpgradePolicy{AutoRollback: ptr.To(false)}, Status: rollingOut(), Desired: bad,
		Now: start.Add(time.Hour)})
	degraded = off.Degraded(conditions.Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected}, nil)
	if !degraded.IsTrue() || degraded.Reason != appsv1alpha1.ReasonProgressDeadline || !strings.Contains(degraded.Message, "autoRollback") {
		t.Errorf("Degraded without automatic rollback = %+v", degraded)
	}
}
