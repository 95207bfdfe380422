package wordpress

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

func db(available metav1.ConditionStatus, observed int64, user string) *appsv1alpha1.MySQL {
	m := &appsv1alpha1.MySQL{
		ObjectMeta: metav1.ObjectMeta{Name: "blog-mysql", Generation: 1},
		Spec:       appsv1alpha1.MySQLSpec{Database: "wordpress", User: user},
		Status:     appsv1alpha1.MySQLStatus{Endpoint: "blog-mysql.shop.svc:3306"},
	}
	if available != "" {
		m.Status.Conditions = []metav1.Condition{{Type: appsv1alpha1.ConditionAvailable, Status: available, ObservedGeneration: observed, Message: "mysqld is not ready"}}
	}
	return m
}

func TestDatabaseProblem(t *testing.T) {
	tests := []struct {
		name   string
		db     *appsv1alpha1.MySQL
		reason string
	}{
		{"available", db(metav1.ConditionTrue, 1, "wordpress"), ""},
		{"no status yet", db("", 0, "wordpress"), appsv1alpha1.ReasonWaitingForDatabase},
		{"status of an older spec", db(metav1.ConditionTrue, 0, "wordpress"), appsv1alpha1.ReasonWaitingForDatabase},
		{"not available", db(metav1.ConditionFalse, 1, "wordpress"), appsv1alpha1.ReasonWaitingForDatabase},
		{"no user to connect as", db(metav1.ConditionTrue, 1, ""), appsv1alpha1.ReasonDatabaseMisconfigured},
	}
	for _, tt := range tests {
		reason, message := databaseProblem(tt.db)
		if reason != tt.reason || (reason == "") != (message == "") {
			t.Errorf("%s: %q %q, want reason %q", tt.name, reason, message, tt.reason)
		}
	}
}

func TestComputeStatus(t *testing.T) {
	wp := &appsv1alpha1.WordPress{
		ObjectMeta: metav1.ObjectMeta{Name: "blog", Namespace: "shop", Generation: 2},
		Spec:       appsv1alpha1.WordPressSpec{Image: "wordpress:6", Replicas: ptr.To[int32](1)},
	}
	ready := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)}}
	ready.Spec.Template.Spec.Containers = []corev1.Container{{Name: "wordpress", Image: "wordpress:6"}}
	ready.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	tests := []struct {
		name                        string
		seen                        observed
		available, dbReady, degrade metav1.ConditionStatus
		availableReason             string
	}{
		{"waiting for its database", observed{db: db(metav1.ConditionFalse, 1, "wordpress"), dbReason: appsv1alpha1.ReasonWaitingForDatabase, dbProblem: "MySQL blog-mysql is not Available"},
			"False", "False", "False", appsv1alpha1.ReasonWaitingForDatabase},
		{"database misconfigured", observed{db: db(metav1.ConditionTrue, 1, ""), dbReason: appsv1alpha1.ReasonDatabaseMisconfigured, dbProblem: "no user"},
			"False", "False", "True", appsv1alpha1.ReasonDatabaseMisconfigured},
		{"serving", observed{db: db(metav1.ConditionTrue, 1, "wordpress"), dep: ready}, "True", "True", "False", appsv1alpha1.ReasonAsExpected},
		{"a pod crash-looping", observed{db: db(metav1.ConditionTrue, 1, "wordpress"), dep: ready, pods: []corev1.Pod{{
			ObjectMeta: metav1.ObjectMeta{Name: "blog-7c9-x"},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "wordpress", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 20s"}}}}},
		}}}, "True", "True", "True", appsv1alpha1.ReasonAsExpected},
		{"pods unreadable", observed{db: db(metav1.ConditionTrue, 1, "wordpress"), dep: ready, podsErr: errors.New("cache not started")},
			"True", "True", "Unknown", appsv1alpha1.ReasonAsExpected},
		{"serving while the database restarts", observed{db: db(metav1.ConditionFalse, 1, "wordpress"), dep: ready, dbReason: appsv1alpha1.ReasonWaitingForDatabase, dbProblem: "restarting"},
			"True", "False", "False", appsv1alpha1.ReasonAsExpected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := computeStatus(wp, rollout.Decision{}, tt.seen, nil)
			for condType, want := range map[string]metav1.ConditionStatus{
				appsv1alpha1.ConditionAvailable: tt.available, appsv1alpha1.ConditionDatabaseReady: tt.dbReady, appsv1alpha1.ConditionDegraded: tt.degrade,
			} {
				if c := meta.FindStatusCondition(status.Conditions, condType); c == nil || c.Status != want || c.ObservedGeneration != 2 {
					t.Errorf("%s = %+v, want %s", condType, c, want)
				}
			}
			if c := meta.FindStatusCondition(status.Conditions, appsv1alpha1.ConditionAvailable); c.Reason != tt.availableReason {
				t.Errorf("Available reason = %s, want %s", c.Reason, tt.availableReason)
			}
			if status.URL != "http://blog.shop.svc" || status.Selector == "" {
				t.Errorf("url/selector = %s/%s", status.URL, status.Selector)
			}
		})
	}
}
