package kubectlplugin

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func TestHealthWords(t *testing.T) {
	now := metav1.Now()
	cond := func(kind string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: kind, Status: status, Reason: reason, Message: message}
	}
	ws := func(generation, observed int64, deleting bool, conditions ...metav1.Condition) instance {
		obj := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: generation}}
		if deleting {
			obj.DeletionTimestamp = &now
		}
		return instance{kind: "webserver", object: obj, desired: 0, observed: observed, conditions: conditions}
	}
	for _, c := range []struct {
		name string
		in   instance
		want string
	}{
		{"deleting", ws(1, 1, true), "deleting"},
		{"spec changed", ws(3, 2, false), "spec changed, generation 3 not yet observed by the operator"},
		{"scaled to zero", ws(1, 1, false, cond("Ready", metav1.ConditionTrue, "ScaledToZero", "")), "scaled to zero"},
		{"unknown", ws(1, 1, false, cond("Ready", metav1.ConditionUnknown, "ReadFailed", "list pods: timeout")), "unknown: ReadFailed: list pods: timeout"},
		{"pre-upgrade backup", ws(1, 1, false, cond("Ready", metav1.ConditionFalse, "WaitingForPreUpgradeBackup", "MySQLBackup db-pre runs")),
			"waiting for the backup before the upgrade: MySQLBackup db-pre runs"},
		{"other reason", ws(1, 1, false, cond("Ready", metav1.ConditionFalse, "ClaimNotBound", "data-db-0 is Pending")), "not ready: ClaimNotBound: data-db-0 is Pending"},
		{"name conflict", ws(1, 1, false, cond("Degraded", metav1.ConditionTrue, "NameConflict", "Service web already exists\nand was not created by appkeeper")),
			"degraded: NameConflict: Service web already exists and was not created by appkeeper"},
		{"no conditions", ws(1, 1, false), "no Ready condition yet"},
	} {
		if got := health(c.in); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	long := health(ws(1, 1, false, cond("Degraded", metav1.ConditionTrue, "CrashLoopBackOff", strings.Repeat("x", 500))))
	if n := len([]rune(long)); n != len("degraded: CrashLoopBackOff: ")+messageLimit {
		t.Errorf("a long message makes a status of %d characters: %q", n, long)
	}
}
