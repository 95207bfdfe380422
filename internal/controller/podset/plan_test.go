package podset

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

const (
	newHash = "new"
	oldHash = "old"
)

func testPodSet(replicas, maxUnavailable int32) *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "ps-uid", Generation: 3},
		Spec:       appsv1alpha1.PodSetSpec{Replicas: ptr.To(replicas), MaxUnavailable: maxUnavailable},
	}
}

// testPod is a pod of testPodSet: controlled by it, from the current template, ready. Options
// change that.
func testPod(name string, options ...func(*corev1.Pod)) corev1.Pod {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "shop", UID: types.UID("uid-" + name),
			Annotations:     map[string]string{appsv1alpha1.AnnotationTemplateHash: newHash},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(testPodSet(0, 1), appsv1alpha1.GroupVersion.WithKind("PodSet"))},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, o := range options {
		o(&pod)
	}
	return pod
}

func notReady(pod *corev1.Pod) {
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = nil
}

func old(pod *corev1.Pod) { pod.Annotations[appsv1alpha1.AnnotationTemplateHash] = oldHash }

func terminating(pod *corev1.Pod) { pod.DeletionTimestamp = &metav1.Time{} }

func failed(pod *corev1.Pod) { pod.Status.Phase = corev1.PodFailed }

func succeeded(pod *corev1.Pod) { pod.Status.Phase = corev1.PodSucceeded }

// foreign pods carry the PodSet's labels but no controller reference to it.
func foreign(pod *corev1.Pod) { pod.OwnerReferences = nil }

// ownedByPrevious pods belong to an earlier PodSet of the same name, deleted and created again.
func ownedByPrevious(pod *corev1.Pod) { pod.OwnerReferences[0].UID = "previous-uid" }

func pods(ps ...corev1.Pod) []corev1.Pod { return ps }

func TestPlanPods(t *testing.T) {
	tests := []struct {
		name     string
		replicas int32
		maxUnav  int32
		pods     []corev1.Pod
		create   []int
		delete   []string // name:why, in the order planned
		taken    []string
	}{
		{name: "nothing yet: every pod in one pass", replicas: 3, maxUnav: 1,
			create: []int{0, 1, 2}},
		{name: "all there", replicas: 3, maxUnav: 1,
			pods: pods(testPod("web-0"), testPod("web-1"), testPod("web-2"))},
		{name: "not ready pods are left to become ready", replicas: 2, maxUnav: 1,
			pods: pods(testPod("web-0", notReady), testPod("web-1", notReady))},

		// A cache that lags behind shows fewer pods than exist: the plan picks the names of the pods
		// it does not show, which the API server refuses as AlreadyExists.
		{name: "stale cache misses the pods the last pass created", replicas: 3, maxUnav: 1,
			pods: pods(testPod("web-0")), create: []int{1, 2}},
		{name: "stale cache after a scale down picks a subset of the last pass's names", replicas: 2, maxUnav: 1,
			pods: pods(testPod("web-0")), create: []int{1}},
		{name: "stale cache shows a deleted pod: nothing to create", replicas: 2, maxUnav: 1,
			pods: pods(testPod("web-0"), testPod("web-1", terminating))},

		{name: "scale to zero", replicas: 0, maxUnav: 1,
			pods:   pods(testPod("web-0"), testPod("web-1")),
			delete: []string{"web-1:surplus", "web-0:surplus"}},
		{name: "scale down removes the highest ordinals", replicas: 1, maxUnav: 1,
			pods:   pods(testPod("web-2"), testPod("web-0"), testPod("web-10"), testPod("web-1")),
			delete: []string{"web-10:surplus", "web-2:surplus", "web-1:surplus"}},
		{name: "scale down removes not ready pods first", replicas: 2, maxUnav: 1,
			pods:   pods(testPod("web-0"), testPod("web-1", notReady), testPod("web-2"), testPod("web-3")),
			delete: []string{"web-1:surplus", "web-3:surplus"}},
		{name: "scale down removes old pods before current ones", replicas: 2, maxUnav: 1,
			pods:   pods(testPod("web-0"), testPod("web-1", old), testPod("web-2")),
			delete: []string{"web-1:surplus"}},
		{name: "a hole left by a scale down is kept", replicas: 3, maxUnav: 1,
			pods: pods(testPod("web-0"), testPod("web-2"), testPod("web-3"))},
		{name: "a replacement takes the lowest free ordinal below replicas", replicas: 3, maxUnav: 1,
			pods: pods(testPod("web-2"), testPod("web-3")), create: []int{0}},
		{name: "scale up fills holes first", replicas: 5, maxUnav: 1,
			pods: pods(testPod("web-0"), testPod("web-2"), testPod("web-3")), create: []int{1, 4}},

		{name: "failed and succeeded pods are replaced once their names are free", replicas: 3, maxUnav: 1,
			pods:   pods(testPod("web-0"), testPod("web-1", failed), testPod("web-2", succeeded)),
			delete: []string{"web-1:finished", "web-2:finished"}},
		{name: "a failed pod's replacement takes a free name at once", replicas: 3, maxUnav: 1,
			pods:   pods(testPod("web-0"), testPod("web-1", failed)),
			create: []int{2}, delete: []string{"web-1:finished"}},
		{name: "a terminating pod holds its name", replicas: 2, maxUnav: 1,
			pods: pods(testPod("web-0"), testPod("web-1", terminating, notReady))},

		{name: "template change: one ready old pod at a time", replicas: 3, maxUnav: 1,
			pods:   pods(testPod("web-0", old), testPod("web-1", old), testPod("web-2", old)),
			delete: []string{"web-2:stale"}},
		{name: "template change: maxUnavailable 2", replicas: 3, maxUnav: 2,
			pods:   pods(testPod("web-0", old), testPod("web-1", old), testPod("web-2", old)),
			delete: []string{"web-2:stale", "web-1:stale"}},
		{name: "template change: maxUnavailable above replicas", replicas: 2, maxUnav: 5,
			pods:   pods(testPod("web-0", old), testPod("web-1", old)),
			delete: []string{"web-1:stale", "web-0:stale"}},
		{name: "template change: a not ready new pod uses the budget", replicas: 3, maxUnav: 1,
			pods: pods(testPod("web-0", old), testPod("web-1", old), testPod("web-2", notReady))},
		{name: "template change: a missing pod uses the budget", replicas: 3, maxUnav: 1,
			pods: pods(testPod("web-0", old), testPod("web-1", old)), create: []int{2}},
		{name: "template change: a terminating pod uses the budget", replicas: 3, maxUnav: 1,
			pods: pods(testPod("web-0", old), testPod("web-1", old), testPod("web-2", old, terminating))},
		{name: "template change: the budget left after one missing pod", replicas: 3, maxUnav: 2,
			pods: pods(testPod("web-0", old), testPod("web-1", old)), create: []int{2}, delete: []string{"web-1:stale"}},
		{name: "template change: old pods that are not ready cost nothing", replicas: 3, maxUnav: 1,
			pods:   pods(testPod("web-0", old, notReady), testPod("web-1", old, notReady), testPod("web-2", old)),
			delete: []string{"web-1:stale", "web-0:stale"}},
		{name: "template change while scaling up", replicas: 4, maxUnav: 1,
			pods: pods(testPod("web-0", old), testPod("web-1", old), testPod("web-2", old)), create: []int{3}},
		{name: "template change while scaling down", replicas: 2, maxUnav: 1,
			pods:   pods(testPod("web-0", old), testPod("web-1"), testPod("web-2", old)),
			delete: []string{"web-2:surplus", "web-0:stale"}},

		{name: "foreign pods are neither counted nor deleted", replicas: 1, maxUnav: 1,
			pods: pods(testPod("web-0"), testPod("web-3", foreign), testPod("stray", foreign), testPod("web-7", ownedByPrevious))},
		{name: "a foreign pod's name is not taken over", replicas: 2, maxUnav: 1,
			pods: pods(testPod("web-0", foreign), testPod("web-2", foreign)), create: []int{1}, taken: []string{"web-0"}},
		{name: "pods of a previous PodSet of the same name block their names", replicas: 2, maxUnav: 1,
			pods:  pods(testPod("web-0", ownedByPrevious, terminating), testPod("web-1", ownedByPrevious, terminating)),
			taken: []string{"web-0", "web-1"}},
		{name: "a pod the PodSet controls but did not name is surplus", replicas: 1, maxUnav: 1,
			pods: pods(testPod("web-0"), testPod("web-x")), delete: []string{"web-x:surplus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			observed := slices.Clone(tt.pods)
			p := planPods(testPodSet(tt.replicas, tt.maxUnav), newHash, observed)
			if !slices.Equal(p.create, tt.create) {
				t.Errorf("create = %v, want %v", p.create, tt.create)
			}
			var deleted []string
			for _, d := range p.delete {
				deleted = append(deleted, fmt.Sprintf("%s:%s", d.pod.Name, []string{"surplus", "stale", "finished"}[d.why]))
			}
			if !slices.Equal(deleted, tt.delete) {
				t.Errorf("delete = %v, want %v", deleted, tt.delete)
			}
			if !slices.Equal(p.taken, tt.taken) {
				t.Errorf("taken = %v, want %v", p.taken, tt.taken)
			}
			if n := len(podsAfter(tt.pods, p)); n > int(tt.replicas) && len(p.create) > 0 {
				t.Errorf("%d pods would exist after creating %v, want at most %d", n, p.create, tt.replicas)
			}
		})
	}
}

// podsAfter counts the pods the PodSet controls, not terminating, once p is carried out.
func podsAfter(observed []corev1.Pod, p plan) []string {
	ps := testPodSet(0, 1)
	gone := map[string]bool{}
	for _, d := range p.delete {
		gone[d.pod.Name] = true
	}
	var out []string
	for _, pod := range observed {
		if metav1.IsControlledBy(&pod, ps) && pod.DeletionTimestamp == nil && !gone[pod.Name] {
			out = append(out, pod.Name)
		}
	}
	for _, o := range p.create {
		out = append(out, fmt.Sprintf("web-%d", o))
	}
	return out
}
