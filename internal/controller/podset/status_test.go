package podset

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/appkeeper/appkeeper/internal/rollout"
)

func TestComputeStatus(t *testing.T) {
	type want struct {
		replicas, ready, updated         int32
		names                            []string
		available, progressing, degraded string // reasons; prefix "+" means status True
		templateHash                     string
	}
	tests := []struct {
		name     string
		replicas int32
		lastHash string // status.templateHash before the pass
		pods     []corev1.Pod
		err      error
		want     want
	}{
		{"no pods yet", 3, "", nil, nil,
			want{0, 0, 0, nil, "Creating", "+Creating", "AsExpected", ""}},
		{"pods starting", 3, "", pods(testPod("web-0"), testPod("web-1", notReady), testPod("web-2", notReady)), nil,
			want{3, 1, 3, []string{"web-0", "web-1", "web-2"}, "ReplicasNotReady", "+Scaling", "AsExpected", ""}},
		{"all ready", 3, "", pods(testPod("web-2"), testPod("web-10"), testPod("web-0")), nil,
			want{3, 3, 3, []string{"web-0", "web-2", "web-10"}, "+AsExpected", "RolloutComplete", "AsExpected", newHash}},
		{"rolling out", 3, oldHash, pods(testPod("web-0", old), testPod("web-1"), testPod("web-2", notReady)), nil,
			want{3, 2, 2, []string{"web-0", "web-1", "web-2"}, "ReplicasNotReady", "+RollingOut", "AsExpected", oldHash}},
		{"rolling out, an old pod deleted and not yet replaced", 3, oldHash, pods(testPod("web-0", old), testPod("web-1")), nil,
			want{2, 2, 1, []string{"web-0", "web-1"}, "ReplicasNotReady", "+RollingOut", "AsExpected", oldHash}},
		{"rolling out, the last old pod replaced and not yet ready", 3, oldHash, pods(testPod("web-0"), testPod("web-1"), testPod("web-2", notReady)), nil,
			want{3, 2, 3, []string{"web-0", "web-1", "web-2"}, "ReplicasNotReady", "+RollingOut", "AsExpected", oldHash}},
		{"rollout complete", 3, oldHash, pods(testPod("web-0"), testPod("web-1"), testPod("web-2")), nil,
			want{3, 3, 3, []string{"web-0", "web-1", "web-2"}, "+AsExpected", "RolloutComplete", "AsExpected", newHash}},
		{"scaling up after a rollout", 3, newHash, pods(testPod("web-0"), testPod("web-1")), nil,
			want{2, 2, 2, []string{"web-0", "web-1"}, "ReplicasNotReady", "+Scaling", "AsExpected", newHash}},
		{"scaling down: terminating pods are not counted", 1, "", pods(testPod("web-0"), testPod("web-1", terminating)), nil,
			want{1, 1, 1, []string{"web-0"}, "+AsExpected", "RolloutComplete", "AsExpected", newHash}},
		{"more ready pods than wanted", 1, "", pods(testPod("web-0"), testPod("web-1")), nil,
			want{2, 2, 2, []string{"web-0", "web-1"}, "+AsExpected", "+Scaling", "AsExpected", ""}},
		{"foreign pods are not counted", 1, "", pods(testPod("web-0"), testPod("web-1", foreign), testPod("web-2", ownedByPrevious)), nil,
			want{1, 1, 1, []string{"web-0"}, "+AsExpected", "RolloutComplete", "AsExpected", newHash}},
		{"scaled to zero", 0, "", nil, nil,
			want{0, 0, 0, nil, "ScaledToZero", "RolloutComplete", "AsExpected", newHash}},
		{"a pod crash-looping", 2, "", pods(testPod("web-0"), testPod("web-1", notReady, crashLooping)), nil,
			want{2, 1, 2, []string{"web-0", "web-1"}, "ReplicasNotReady", "+Scaling", "+CrashLoopBackOff", ""}},
		{"pass failed", 2, "", pods(testPod("web-1")), errors.New("pods web-0 exist but are not controlled by this PodSet"),
			want{1, 1, 1, []string{"web-1"}, "ReplicasNotReady", "+Scaling", "+ReconcileFailed", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := testPodSet(tt.replicas, 1)
			ps.Generation = 7
			ps.Status.TemplateHash = tt.lastHash
			got := computeStatus(ps, newHash, rollout.Decision{}, tt.pods, nil, nil, tt.err)
			if got.ObservedGeneration != 7 || got.Selector != "app.kubernetes.io/instance=web,app.kubernetes.io/name=podset" {
				t.Errorf("observedGeneration/selector = %d/%q", got.ObservedGeneration, got.Selector)
			}
			w := tt.want
			if got.Replicas != w.replicas || got.ReadyReplicas != w.ready || got.UpdatedReplicas != w.updated {
				t.Errorf("replicas/ready/updated = %d/%d/%d, want %d/%d/%d",
					got.Replicas, got.ReadyReplicas, got.UpdatedReplicas, w.replicas, w.ready, w.updated)
			}
			if got.TemplateHash != w.templateHash {
				t.Errorf("templateHash = %q, want %q", got.TemplateHash, w.templateHash)
			}
			if !slices.Equal(got.PodNames, w.names) {
				t.Errorf("podNames = %v, want %v", got.PodNames, w.names)
			}
			for condType, reason := range map[string]string{"Available": w.available, "Progressing": w.progressing, "Degraded": w.degraded} {
				c := meta.FindStatusCondition(got.Conditions, condType)
				wantStatus := metav1.ConditionFalse
				if reason[0] == '+' {
					wantStatus, reason = metav1.ConditionTrue, reason[1:]
				}
				if c == nil || c.Status != wantStatus || c.Reason != reason || c.ObservedGeneration != 7 {
					t.Errorf("%s = %+v, want %s %s for generation 7", condType, c, wantStatus, reason)
				}
			}
			// The same observation again gives the same status, so an idle PodSet writes nothing.
			ps.Status = got
			if again := computeStatus(ps, newHash, rollout.Decision{}, tt.pods, nil, nil, tt.err); !equality.Semantic.DeepEqual(again, got) {
				t.Errorf("status changed on a second pass:\n%+v\n%+v", got, again)
			}
		})
	}
}

func TestPodNamesAreBounded(t *testing.T) {
	var observed []corev1.Pod
	for i := 299; i >= 0; i-- {
		observed = append(observed, testPod(fmt.Sprintf("web-%d", i)))
	}
	got := computeStatus(testPodSet(300, 1), newHash, rollout.Decision{}, observed, nil, nil, nil)
	if got.Replicas != 300 || len(got.PodNames) != 256 || got.PodNames[0] != "web-0" || got.PodNames[255] != "web-255" {
		t.Errorf("replicas %d, %d names from %s to %s; want 300, 256 from web-0 to web-255",
			got.Replicas, len(got.PodNames), got.PodNames[0], got.PodNames[len(got.PodNames)-1])
	}
}

func crashLooping(pod *corev1.Pod) {
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app"}}}}
}

// TestUnreadablePodsKeepThePodList feeds a failed read of the pods: the pods last reported stay,
// and every condition is Unknown rather than a confident False.
func TestUnreadablePodsKeepThePodList(t *testing.T) {
	ps := testPodSet(2, 1)
	ps.Status = computeStatus(ps, newHash, rollout.Decision{}, pods(testPod("web-0"), testPod("web-1")), nil, nil, nil)
	got := computeStatus(ps, newHash, rollout.Decision{}, nil, nil, errors.New("cache not started"), nil)
	if got.Replicas != 2 || got.ReadyReplicas != 2 || !slices.Equal(got.PodNames, []string{"web-0", "web-1"}) {
		t.Errorf("replicas/ready/podNames = %d/%d/%v after a failed read, want the two pods kept", got.Replicas, got.ReadyReplicas, got.PodNames)
	}
	for _, condType := range []string{"Available", "Progressing", "Degraded"} {
		if c := meta.FindStatusCondition(got.Conditions, condType); c.Status != metav1.ConditionUnknown || c.Reason != "ReadFailed" {
			t.Errorf("%s = %+v, want Unknown/ReadFailed", condType, c)
		}
	}
}

// TestScaleUpKeepsAvailable checks that pods being added to an Available PodSet do not make it
// unavailable, while a pod that served and stopped does.
func TestScaleUpKeepsAvailable(t *testing.T) {
	ps := testPodSet(3, 1)
	ps.Status = computeStatus(ps, newHash, rollout.Decision{}, pods(testPod("web-0"), testPod("web-1"), testPod("web-2")), nil, nil, nil)
	became := meta.FindStatusCondition(ps.Status.Conditions, "Available").LastTransitionTime
	added := func(pod *corev1.Pod) { pod.CreationTimestamp = metav1.NewTime(became.Add(time.Minute)) }

	ps.Spec.Replicas = ptr.To[int32](5)
	for name, observed := range map[string][]corev1.Pod{
		"new pods not created yet": pods(testPod("web-0"), testPod("web-1"), testPod("web-2")),
		"new pods starting":        pods(testPod("web-0"), testPod("web-1"), testPod("web-2"), testPod("web-3", notReady, added), testPod("web-4", notReady, added)),
	} {
		if c := meta.FindStatusCondition(computeStatus(ps, newHash, rollout.Decision{}, observed, nil, nil, nil).Conditions, "Available"); c.Status != metav1.ConditionTrue {
			t.Errorf("%s: Available = %+v, want True while capacity is added", name, c)
		}
	}
	stopped := pods(testPod("web-0"), testPod("web-1", notReady), testPod("web-2"), testPod("web-3", added), testPod("web-4", added))
	if c := meta.FindStatusCondition(computeStatus(ps, newHash, rollout.Decision{}, stopped, nil, nil, nil).Conditions, "Available"); c.Status != metav1.ConditionFalse {
		t.Errorf("a serving pod stopped: Available = %+v, want False", c)
	}
}
