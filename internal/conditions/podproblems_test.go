package conditions

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func waiting(name, container, reason, message string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
		}}},
	}
}

func withCondition(pod corev1.Pod, c corev1.PodCondition) corev1.Pod {
	pod.Status.Conditions = append(pod.Status.Conditions, c)
	return pod
}

func TestPodsDegraded(t *testing.T) {
	unschedulable := withCondition(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cache-1"}}, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 Insufficient memory."})
	initFailing := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db-0"},
		Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{
			Name: "init", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "db" not found`}},
		}}},
	}
	waitingForClaim := withCondition(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0"}}, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."})
	waitingForVolume := withCondition(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0"}}, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: `0/3 nodes are available: persistentvolumeclaim "data-db-0" bound to non-existent persistentvolume "pvc-1".`})
	deleting := waiting("web-2", "nginx", "CrashLoopBackOff", "back-off")
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	tests := []struct {
		name    string
		pods    []corev1.Pod
		err     error
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{"no pods", nil, nil, "", "AsExpected", ""},
		{"starting pods are no problem", []corev1.Pod{waiting("web-1", "nginx", "ContainerCreating", "")}, nil, "", "AsExpected", ""},
		{"crash loop", []corev1.Pod{waiting("web-1", "nginx", "CrashLoopBackOff", "back-off 5m0s restarting failed container=nginx")}, nil,
			metav1.ConditionTrue, "CrashLoopBackOff", "pod web-1: container nginx: CrashLoopBackOff: back-off 5m0s restarting failed container=nginx"},
		{"image pull", []corev1.Pod{waiting("web-1", "nginx", "ImagePullBackOff", `Back-off pulling image "nginx:nope"`)}, nil,
			metav1.ConditionTrue, "ImagePullBackOff", `pod web-1: container nginx: ImagePullBackOff: Back-off pulling image "nginx:nope"`},
		{"init container config", []corev1.Pod{initFailing}, nil,
			metav1.ConditionTrue, "SecretMissing", `pod db-0: container init: SecretMissing: secret "db" not found`},
		{"unschedulable", []corev1.Pod{unschedulable}, nil,
			metav1.ConditionTrue, "Unschedulable", "pod cache-1: Unschedulable: 0/3 nodes are available: 3 Insufficient memory."},
		{"waiting for a claim to be bound is no problem", []corev1.Pod{waitingForClaim}, nil, "", "AsExpected", ""},
		{"waiting for the scheduler to see a bound volume is no problem", []corev1.Pod{waitingForVolume}, nil, "", "AsExpected", ""},
		{"first by name speaks, the others are counted", []corev1.Pod{
			waiting("web-3", "nginx", "ErrImagePull", "not found"), unschedulable, waiting("web-1", "nginx", "CrashLoopBackOff", "back-off"),
		}, nil, metav1.ConditionTrue, "Unschedulable", "pod cache-1: Unschedulable: 0/3 nodes are available: 3 Insufficient memory. (and 2 more pods failing)"},
		{"a pod being deleted is no problem", []corev1.Pod{deleting}, nil, "", "AsExpected", ""},
		{"a failed read is unknown", []corev1.Pod{waiting("web-1", "nginx", "CrashLoopBackOff", "")}, errors.New("cache not synced"),
			metav1.ConditionUnknown, "ReadFailed", "the pods could not be read: cache not synced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := PodsDegraded(tt.pods, nil, tt.err)
			if c.Type != "Degraded" || c.Status != tt.status || c.Reason != tt.reason || c.Message != tt.message {
				t.Errorf("PodsDegraded = %+v, want %q/%s/%q", c, tt.status, tt.reason, tt.message)
			}
		})
	}
}

func TestPodsDegradedSaysAPodIsOnALostNodeAfterThePodsOwnProblems(t *testing.T) {
	lost := []PodProblem{{Reason: "NodeLost", Message: "pod web-2: its node worker-3 has not reported since 2026-11-28T16:50:03Z"}}
	c := PodsDegraded([]corev1.Pod{waiting("web-1", "nginx", "ContainerCreating", "")}, lost, nil)
	if c.Status != metav1.ConditionTrue || c.Reason != "NodeLost" || c.Message != lost[0].Message {
		t.Errorf("one pod on a lost node: PodsDegraded = %+v, want True/NodeLost/%q", c, lost[0].Message)
	}
	c = PodsDegraded([]corev1.Pod{waiting("web-9", "nginx", "CrashLoopBackOff", "back-off")}, lost, nil)
	if want := "pod web-9: container nginx: CrashLoopBackOff: back-off (and 1 more pods failing)"; c.Reason != "CrashLoopBackOff" || c.Message != want {
		t.Errorf("a crash loop and a lost node: PodsDegraded = %+v, want CrashLoopBackOff/%q", c, want)
	}
	if c = PodsDegraded(nil, lost, errors.New("cache not synced")); c.Status != metav1.ConditionUnknown {
		t.Errorf("a failed read with a lost node: PodsDegraded = %+v, want Unknown", c)
	}
}

func TestPodStatusChanged(t *testing.T) {
	ready := func(pod corev1.Pod) corev1.Pod {
		return withCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	}
	base := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{"a": "b"}}}
	probed := ready(base)
	probed.Status.PodIP = "10.0.0.2"
	relabelled := base
	relabelled.Labels = map[string]string{"a": "c"}
	deleting := base
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	failed := base
	failed.Status.Phase = corev1.PodFailed
	tests := []struct {
		name     string
		old, new corev1.Pod
		want     bool
	}{
		{"nothing the status reads", ready(base), probed, false},
		{"same problem, same message", waiting("web-1", "nginx", "CrashLoopBackOff", "back-off 5m0s"), waiting("web-1", "nginx", "CrashLoopBackOff", "back-off 5m0s"), false},
		{"becomes ready", base, ready(base), true},
		{"problem appears", base, waiting("web-1", "nginx", "ImagePullBackOff", "x"), true},
		{"problem changes", waiting("web-1", "nginx", "ErrImagePull", "x"), waiting("web-1", "nginx", "ImagePullBackOff", "x"), true},
		{"problem goes", waiting("web-1", "nginx", "ErrImagePull", "x"), waiting("web-1", "nginx", "ContainerCreating", ""), true},
		{"labels", base, relabelled, true},
		{"deletion", base, deleting, true},
		{"phase", base, failed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PodStatusChanged(&tt.old, &tt.new); got != tt.want {
				t.Errorf("PodStatusChanged = %v, want %v", got, tt.want)
			}
		})
	}
}
