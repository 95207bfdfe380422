package rollout

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestWedgedMembers(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", UID: "sts", Generation: 3},
		Status:     appsv1.StatefulSetStatus{ObservedGeneration: 3, CurrentRevision: "db-old", UpdateRevision: "db-new"},
	}
	member := func(name, revision string, ready bool, notReadyFor time.Duration, mutate ...func(*corev1.Pod)) corev1.Pod {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: revision},
				OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "db", UID: "sts", Controller: ptr.To(true)}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status,
				LastTransitionTime: metav1.NewTime(now.Add(-notReadyFor))}}},
		}
		for _, m := range mutate {
			m(&p)
		}
		return p
	}
	crashing := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mysql", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	}
	deleting := func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(now)) }
	foreign := func(p *corev1.Pod) { p.OwnerReferences[0].UID = "other" }
	tests := []struct {
		name    string
		sts     *appsv1.StatefulSet
		pods    []corev1.Pod
		wedged  []string
		recheck time.Duration
	}{
		{"crash-looping on the old revision", sts, []corev1.Pod{member("db-0", "db-old", false, time.Second, crashing)}, []string{"db-0"}, 0},
		{"not ready past the grace on the old revision", sts, []corev1.Pod{member("db-0", "db-old", false, 3*time.Minute)}, []string{"db-0"}, 0},
		{"not ready within the grace: look again later", sts, []corev1.Pod{member("db-0", "db-old", false, 30*time.Second)}, nil, 90 * time.Second},
		{"a Ready member of the old revision is never touched", sts, []corev1.Pod{member("db-0", "db-old", true, time.Hour)}, nil, 0},
		{"a crash-looping member of the update revision is the spec's own", sts, []corev1.Pod{member("db-0", "db-new", false, time.Hour, crashing)}, nil, 0},
		{"being deleted or not the StatefulSet's", sts, []corev1.Pod{
			member("db-0", "db-old", false, time.Hour, deleting), member("db-1", "db-old", false, time.Hour, foreign)}, nil, 0},
		{"several, in name order", sts, []corev1.Pod{
			member("db-2", "db-old", false, time.Hour), member("db-1", "db-old", false, 0, crashing)}, []string{"db-1", "db-2"}, 0},
		{"a StatefulSet its controller has not observed yet", &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{UID: "sts", Generation: 4}, Status: sts.Status,
		}, []corev1.Pod{member("db-0", "db-old", false, time.Hour, crashing)}, nil, 0},
		{"no revision label: no known revision", sts, []corev1.Pod{member("db-0", "", false, time.Hour, crashing)}, nil, 0},
		{"no StatefulSet", nil, []corev1.Pod{member("db-0", "db-old", false, time.Hour, crashing)}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wedged, recheck := WedgedMembers(tt.sts, tt.pods, now)
			var names []string
			for _, p := range wedged {
				names = append(names, p.Name)
			}
			if len(names) != len(tt.wedged) || recheck != tt.recheck {
				t.Fatalf("wedged %v, recheck %s; want %v, %s", names, recheck, tt.wedged, tt.recheck)
			}
			for i := range names {
				if names[i] != tt.wedged[i] {
					t.Errorf("wedged %v, want %v", names, tt.wedged)
				}
			}
		})
	}
}

func TestRolledBackMembers(t *testing.T) {
	began := time.Date(2026, 1, 1, 12, 0, 0, 500_000_000, time.UTC)
	// The StatefulSet's controller has seen the rollback: the update revision is the restored one.
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", UID: "sts", Generation: 5},
		Status:     appsv1.StatefulSetStatus{ObservedGeneration: 5, CurrentRevision: "cache-good", UpdateRevision: "cache-good"},
	}
	member := func(name, revision string, created time.Time, ready bool, mutate ...func(*corev1.Pod)) corev1.Pod {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created),
				Labels:          map[string]string{appsv1.ControllerRevisionHashLabelKey: revision},
				OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "cache", UID: "sts", Controller: ptr.To(true)}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
		}
		for _, m := range mutate {
			m(&p)
		}
		return p
	}
	foreign := func(p *corev1.Pod) { p.OwnerReferences[0].UID = "other" }
	deleting := func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(began)) }
	after, sameSecond, before := began.Add(time.Minute), began.Truncate(time.Second), began.Add(-time.Hour)
	tests := []struct {
		name   string
		sts    *appsv1.StatefulSet
		pods   []corev1.Pod
		failed []string
	}{
		{"a member of the failed revision that never turned Ready", sts, []corev1.Pod{member("cache-2", "cache-bad", after, false)}, []string{"cache-2"}},
		{"created in the second the rollout began", sts, []corev1.Pod{member("cache-2", "cache-bad", sameSecond, false)}, []string{"cache-2"}},
		{"a Ready member of the failed revision is left for the StatefulSet to replace", sts,
			[]corev1.Pod{member("cache-2", "cache-bad", after, true)}, nil},
		{"the restored revision starting is never touched", sts, []corev1.Pod{member("cache-2", "cache-good", after, false)}, nil},
		{"a member older than the rollout is not the failed revision's", sts, []corev1.Pod{member("cache-0", "cache-older", before, false)}, nil},
		{"being deleted, not the StatefulSet's, or of no known revision", sts, []corev1.Pod{
			member("cache-0", "cache-bad", after, false, deleting), member("cache-1", "cache-bad", after, false, foreign),
			member("cache-2", "", after, false)}, nil},
		{"several, in name order", sts, []corev1.Pod{
			member("cache-2", "cache-bad", after, false), member("cache-1", "cache-bad", after, false)}, []string{"cache-1", "cache-2"}},
		{"the StatefulSet's controller has not seen the rollback yet", &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{UID: "sts", Generation: 6}, Status: sts.Status,
		}, []corev1.Pod{member("cache-2", "cache-bad", after, false)}, nil},
		{"no StatefulSet", nil, []corev1.Pod{member("cache-2", "cache-bad", after, false)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for _, p := range RolledBackMembers(tt.sts, tt.pods, began) {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, tt.failed) {
				t.Errorf("failed members %v, want %v", names, tt.failed)
			}
		})
	}
}
