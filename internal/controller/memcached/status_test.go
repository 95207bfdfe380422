package memcached

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	resources "github.com/appkeeper/appkeeper/internal/resources/memcached"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

const image = "memcached:1.6.38-alpine"

func newMemcached(size int32) *appsv1alpha1.Memcached {
	return &appsv1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Generation: 7},
		Spec:       appsv1alpha1.MemcachedSpec{Size: ptr.To(size), Image: image, Port: 11211},
	}
}

// statefulSet is the StatefulSet of newMemcached observed with the given template image, spec
// replicas and status counts; its revisions differ while pods of an older template remain.
func statefulSet(image string, spec, replicas, updated, available int32) *appsv1.StatefulSet {
	update := "cache-2"
	current := update
	if updated < replicas {
		current = "cache-1"
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", UID: "sts-uid", Generation: 2},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(spec),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: resources.ContainerName, Image: image, Args: resources.Args(newMemcached(spec)),
			}}}},
		},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: available, AvailableReplicas: available,
			CurrentRevision: current, UpdateRevision: update,
		},
	}
}

// pod is a member pod cache-<n> owned by the StatefulSet, ready or not.
func pod(n int, ready bool, mutate ...func(*corev1.Pod)) corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("cache-%d", n),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: "cache", UID: "sts-uid", Controller: ptr.To(true),
			}},
		},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
	for _, m := range mutate {
		m(&p)
	}
	return p
}

func readyPods(n int) []corev1.Pod {
	var pods []corev1.Pod
	for i := range n {
		pods = append(pods, pod(i, true))
	}
	return pods
}

// reversed lists pods backwards, as a cache may return them in any order.
func reversed(pods []corev1.Pod) []corev1.Pod {
	slices.Reverse(pods)
	return pods
}

func TestComputeStatus(t *testing.T) {
	type want struct {
		available, progressing, degraded string // reasons; prefix "+" means status True, "?" Unknown
		size, ready                      int32
		nodes                            []string
	}
	crashing := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "memcached", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s"}}}}
	}
	tests := []struct {
		name string
		size int32
		sts  *appsv1.StatefulSet
		pods []corev1.Pod
		err  error
		want want
	}{
		{"no statefulset yet", 3, nil, nil, nil,
			want{"Creating", "+Creating", "AsExpected", 0, 0, nil}},
		{"members starting", 3, statefulSet(image, 3, 3, 3, 1), []corev1.Pod{pod(0, true), pod(1, false), pod(2, false)}, nil,
			want{"ReplicasNotReady", "+Scaling", "AsExpected", 3, 1, []string{"cache-0"}}},
		{"all ready", 3, statefulSet(image, 3, 3, 3, 3), readyPods(3), nil,
			want{"+AsExpected", "RolloutComplete", "AsExpected", 3, 3, []string{"cache-0", "cache-1", "cache-2"}}},
		{"scaling up: statefulset not yet changed", 5, statefulSet(image, 3, 3, 3, 3), readyPods(3), nil,
			want{"ReplicasNotReady", "+Scaling", "AsExpected", 3, 3, []string{"cache-0", "cache-1", "cache-2"}}},
		{"nodes are in ordinal order", 12, statefulSet(image, 12, 12, 12, 12), reversed(readyPods(12)), nil,
			want{"+AsExpected", "RolloutComplete", "AsExpected", 12, 12, []string{
				"cache-0", "cache-1", "cache-2", "cache-3", "cache-4", "cache-5", "cache-6", "cache-7", "cache-8", "cache-9", "cache-10", "cache-11"}}},
		{"new image not yet in the statefulset", 3, statefulSet("memcached:1.6.37", 3, 3, 3, 3), readyPods(3), nil,
			want{"+AsExpected", "+RollingOut", "AsExpected", 3, 3, []string{"cache-0", "cache-1", "cache-2"}}},
		{"rolling out one member at a time keeps it Available", 3, statefulSet(image, 3, 3, 1, 2), []corev1.Pod{pod(0, true), pod(1, true), pod(2, false)}, nil,
			want{"+AsExpected", "+RollingOut", "AsExpected", 3, 2, []string{"cache-0", "cache-1"}}},
		{"scaled to zero", 0, statefulSet(image, 0, 0, 0, 0), nil, nil,
			want{"ScaledToZero", "RolloutComplete", "AsExpected", 0, 0, nil}},
		{"scaling to zero while members stop", 0, statefulSet(image, 3, 3, 3, 3), readyPods(3), nil,
			want{"ScaledToZero", "+Scaling", "AsExpected", 3, 3, []string{"cache-0", "cache-1", "cache-2"}}},
		{"deleting, foreign and unrelated pods are not members", 2, statefulSet(image, 2, 2, 2, 2), []corev1.Pod{
			pod(0, true),
			pod(1, true, func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }),
			pod(5, true, func(p *corev1.Pod) { p.OwnerReferences[0].UID = "old-sts" }),
			pod(6, true, func(p *corev1.Pod) { p.OwnerReferences = nil }),
			pod(0, true, func(p *corev1.Pod) { p.Name = "cache-web-0" }),
		}, nil,
			want{"ReplicasNotReady", "RolloutComplete", "AsExpected", 2, 1, []string{"cache-0"}}},
		{"crashing member", 2, statefulSet(image, 2, 2, 2, 1), []corev1.Pod{pod(0, true), pod(1, false, crashing)}, nil,
			want{"ReplicasNotReady", "+Scaling", "+CrashLoopBackOff", 2, 1, []string{"cache-0"}}},
		{"unschedulable member", 2, statefulSet(image, 2, 2, 2, 1), []corev1.Pod{pod(0, true), pod(1, false, func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		})}, nil,
			want{"ReplicasNotReady", "+Scaling", "+Unschedulable", 2, 1, []string{"cache-0"}}},
		{"apply failed, StatefulSet unobserved", 3, nil, nil, errors.New("forbidden"),
			want{"?ReadFailed", "?ReadFailed", "+ReconcileFailed", 0, 0, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := computeStatus(newMemcached(tt.size), rollout.Decision{}, tt.sts, tt.pods, nil, nil, tt.err)
			if got.ObservedGeneration != 7 || got.Size != tt.want.size || got.ReadyReplicas != tt.want.ready || !slices.Equal(got.Nodes, tt.want.nodes) {
				t.Errorf("observedGeneration/size/ready/nodes = %d/%d/%d/%q, want 7/%d/%d/%q",
					got.ObservedGeneration, got.Size, got.ReadyReplicas, got.Nodes, tt.want.size, tt.want.ready, tt.want.nodes)
			}
			if got.Selector != "app.kubernetes.io/instance=cache,app.kubernetes.io/name=memcached" {
				t.Errorf("selector = %q", got.Selector)
			}
			for condType, reason := range map[string]string{
				appsv1alpha1.ConditionAvailable:   tt.want.available,
				appsv1alpha1.ConditionProgressing: tt.want.progressing,
				appsv1alpha1.ConditionDegraded:    tt.want.degraded,
			} {
				c := meta.FindStatusCondition(got.Conditions, condType)
				wantStatus := metav1.ConditionFalse
				switch reason[0] {
				case '+':
					wantStatus, reason = metav1.ConditionTrue, reason[1:]
				case '?':
					wantStatus, reason = metav1.ConditionUnknown, reason[1:]
				}
				if c == nil || c.Status != wantStatus || c.Reason != reason || c.ObservedGeneration != 7 {
					t.Errorf("%s = %+v, want %s/%s", condType, c, wantStatus, reason)
				}
			}
		})
	}
}

func TestNodesAreBounded(t *testing.T) {
	mc := newMemcached(appsv1alpha1.MaxMemcachedSize)
	pods := readyPods(appsv1alpha1.MaxMemcachedSize + 10)
	got := computeStatus(mc, rollout.Decision{}, statefulSet(image, 256, 266, 266, 266), pods, nil, nil, nil)
	if len(got.Nodes) != appsv1alpha1.MaxMemcachedSize || got.ReadyReplicas != 266 {
		t.Errorf("%d nodes, %d ready; want %d nodes, 266 ready", len(got.Nodes), got.ReadyReplicas, appsv1alpha1.MaxMemcachedSize)
	}
}

func TestScaledToZeroExplainsWhy(t *testing.T) {
	got := computeStatus(newMemcached(0), rollout.Decision{}, statefulSet(image, 0, 0, 0, 0), nil, nil, nil, nil)
	c := meta.FindStatusCondition(got.Conditions, appsv1alpha1.ConditionAvailable)
	if c.Message == "" || c.Reason != appsv1alpha1.ReasonScaledToZero {
		t.Errorf("Available = %+v", c)
	}
}

func TestComputeStatusIsStable(t *testing.T) {
	mc := newMemcached(2)
	sts := statefulSet(image, 2, 2, 2, 2)
	mc.Status = computeStatus(mc, rollout.Decision{}, sts, readyPods(2), nil, nil, nil)
	again := computeStatus(mc, rollout.Decision{}, sts, reversed(readyPods(2)), nil, nil, nil)
	if !equality.Semantic.DeepEqual(mc.Status, again) {
		t.Errorf("a second pass over the same observation changed the status:\n%+v\n%+v", mc.Status, again)
	}
}

// TestMemberChanged checks which pod updates reach the Memcached: those that can change its status.
func TestMemberChanged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		updated corev1.Pod
		want    bool
	}{
		{name: "a new resourceVersion only", updated: pod(0, true, func(p *corev1.Pod) { p.ResourceVersion = "9" })},
		{name: "a new pod IP", updated: pod(0, true, func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.9" })},
		{name: "owner reference copied, same owner", updated: pod(0, true, func(p *corev1.Pod) {
			p.OwnerReferences = slices.Clone(p.OwnerReferences)
			p.OwnerReferences[0].Controller = ptr.To(true)
		})},
		{name: "no longer ready", updated: pod(0, false), want: true},
		{name: "cannot pull its image", updated: pod(0, true, func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "memcached", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
		}), want: true},
		{name: "being deleted", updated: pod(0, true, func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }), want: true},
		{name: "relabelled", updated: pod(0, true, func(p *corev1.Pod) { p.Labels = map[string]string{"x": "y"} }), want: true},
		{name: "another owner", updated: pod(0, true, func(p *corev1.Pod) { p.OwnerReferences[0].UID = "other" }), want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := pod(0, true)
			if got := conditions.PodStatusChanged(&old, &tc.updated); got != tc.want {
				t.Errorf("PodStatusChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUnreadablePodsKeepTheMembers feeds a failed read of the pods: the members last reported stay,
// and what only the pods can tell is Unknown rather than a confident False.
func TestUnreadablePodsKeepTheMembers(t *testing.T) {
	mc := newMemcached(3)
	sts := statefulSet(image, 3, 3, 3, 3)
	mc.Status = computeStatus(mc, rollout.Decision{}, sts, readyPods(3), nil, nil, nil)
	got := computeStatus(mc, rollout.Decision{}, sts, nil, nil, errors.New("cache not started"), nil)
	if got.ReadyReplicas != 3 || !slices.Equal(got.Nodes, []string{"cache-0", "cache-1", "cache-2"}) {
		t.Errorf("ready/nodes = %d/%q after a failed read, want the 3 members kept", got.ReadyReplicas, got.Nodes)
	}
	for _, condType := range []string{appsv1alpha1.ConditionAvailable, appsv1alpha1.ConditionDegraded} {
		if c := meta.FindStatusCondition(got.Conditions, condType); c.Status != metav1.ConditionUnknown || c.Reason != appsv1alpha1.ReasonReadFailed {
			t.Errorf("%s = %+v, want Unknown/ReadFailed", condType, c)
		}
	}
}

// TestScaleUpKeepsAvailable scales a healthy Memcached from 3 to 5: the 3 members still serve.
func TestScaleUpKeepsAvailable(t *testing.T) {
	mc := newMemcached(3)
	mc.Status = computeStatus(mc, rollout.Decision{}, statefulSet(image, 3, 3, 3, 3), readyPods(3), nil, nil, nil)
	became := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionAvailable).LastTransitionTime
	mc.Spec.Size = ptr.To[int32](5)
	later := func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(became.Add(time.Minute)) }
	pods := append(readyPods(3), pod(3, false, later), pod(4, false, later))
	got := computeStatus(mc, rollout.Decision{}, statefulSet(image, 5, 5, 5, 3), pods, nil, nil, nil)
	if c := meta.FindStatusCondition(got.Conditions, appsv1alpha1.ConditionAvailable); c.Status != metav1.ConditionTrue {
		t.Errorf("Available = %+v during a scale up, want True", c)
	}
	// A member that served and stopped is not a member being added.
	pods = append(readyPods(2), pod(2, false), pod(3, false, later), pod(4, false, later))
	got = computeStatus(mc, rollout.Decision{}, statefulSet(image, 5, 5, 5, 2), pods, nil, nil, nil)
	if c := meta.FindStatusCondition(got.Conditions, appsv1alpha1.ConditionAvailable); c.Status != metav1.ConditionFalse {
		t.Errorf("Available = %+v with a serving member lost, want False", c)
	}
}
