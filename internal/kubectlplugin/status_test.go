package kubectlplugin_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

const (
	isTrue  = metav1.ConditionTrue
	isFalse = metav1.ConditionFalse
)

// conditionsWith are the five conditions of an instance whose Ready is ready, and whose Degraded
// (and so Stalled) is degraded when not nil.
func conditionsWith(ready metav1.Condition, degraded *metav1.Condition) []metav1.Condition {
	healthy := condition(appsv1alpha1.ConditionDegraded, isFalse, "AsExpected", "")
	if degraded == nil {
		degraded = &healthy
	}
	stalled := *degraded
	stalled.Type = appsv1alpha1.ConditionStalled
	progressing := condition(appsv1alpha1.ConditionProgressing, isFalse, "RolloutComplete", "")
	if ready.Status == isFalse && degraded.Status == isFalse {
		progressing = condition(appsv1alpha1.ConditionProgressing, isTrue, ready.Reason, ready.Message)
	}
	return []metav1.Condition{
		condition(appsv1alpha1.ConditionAvailable, isTrue, "AsExpected", ""), progressing, *degraded, ready, stalled,
	}
}

func readyCondition() metav1.Condition {
	return condition(appsv1alpha1.ConditionReady, isTrue, "AsExpected", "")
}

func notReady(reason, message string) metav1.Condition {
	return condition(appsv1alpha1.ConditionReady, isFalse, reason, message)
}

func webServer(ns, name string, replicas int32) *appsv1alpha1.WebServer {
	return &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To(replicas), Image: "nginx:1.27.4"},
	}
}

func podSet(ns, name string) *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1alpha1.PodSetSpec{Replicas: ptr.To[int32](2), Template: appsv1alpha1.PodSetTemplate{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
		}},
	}
}

// createInStates creates one instance of each kind in a state the operator reports, with the
// status it would write.
func createInStates(t *testing.T, ns string) {
	web := webServer(ns, "web", 3)
	next := webServer(ns, "next", 3)
	broken := webServer(ns, "broken", 2)
	cache := &appsv1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}, Spec: appsv1alpha1.MemcachedSpec{Size: ptr.To[int32](5)}}
	workers, fresh := podSet(ns, "workers"), podSet(ns, "fresh")
	db := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	dbCopy := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-copy"}}
	ledger := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger"}, Spec: appsv1alpha1.MySQLSpec{Members: 3}}
	blog := &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blog"}}
	create(t, web, next, broken, cache, workers, fresh, db, dbCopy, ledger, blog)

	web.Status = appsv1alpha1.WebServerStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3,
		Image: "nginx:1.27.4", Conditions: conditionsWith(readyCondition(), nil)}
	next.Status = appsv1alpha1.WebServerStatus{ObservedGeneration: 1, Replicas: 4, ReadyReplicas: 3, UpdatedReplicas: 2,
		Image: "nginx:1.27.3", Conditions: conditionsWith(notReady("RollingOut", "2 of 3 updated"), nil),
		Rollout: appsv1alpha1.RolloutStatus{CurrentRevision: "5f8d9c7b6a", UpdateRevision: "5f8d9c7b6a"}}
	rolledBack := condition(appsv1alpha1.ConditionDegraded, isTrue, "RolledBack", "revision 0b7e45c1d3 (nginx:bogus) failed: …")
	broken.Status = appsv1alpha1.WebServerStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 0,
		Image: "nginx:1.27.4", Conditions: conditionsWith(notReady("RolledBack", rolledBack.Message), &rolledBack),
		Rollout: appsv1alpha1.RolloutStatus{CurrentRevision: "6f1c0d2a9e", UpdateRevision: "0b7e45c1d3", Rollbacks: 1,
			LastGood: &appsv1alpha1.GoodRevision{Name: "6f1c0d2a9e", Image: "nginx:1.27.4", Time: since},
			Failed:   &appsv1alpha1.FailedRevision{Name: "0b7e45c1d3", Image: "nginx:bogus", Reason: "ImagePullBackOff", Time: since}}}
	cache.Status = appsv1alpha1.MemcachedStatus{ObservedGeneration: 1, Size: 5, ReadyReplicas: 3, Image: "memcached:1.6.38-alpine",
		Conditions: conditionsWith(notReady("Scaling", "3 of 5 members ready"), nil)}
	workers.Status = appsv1alpha1.PodSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2,
		Conditions: conditionsWith(readyCondition(), nil), Rollout: appsv1alpha1.RolloutStatus{CurrentRevision: "bd61e38ac7", UpdateRevision: "bd61e38ac7"}}
	pullFailed := condition(appsv1alpha1.ConditionDegraded, isTrue, "ImagePullBackOff",
		`pod db-0: container mysql: ImagePullBackOff: Back-off pulling image "mysql:9.9.9"`)
	db.Status = appsv1alpha1.MySQLStatus{ObservedGeneration: 1, DesiredReplicas: 1, Conditions: conditionsWith(notReady("ImagePullBackOff", pullFailed.Message), &pullFailed)}
	dbCopy.Status = appsv1alpha1.MySQLStatus{ObservedGeneration: 1, DesiredReplicas: 1,
		Conditions: conditionsWith(notReady("RestoreSourceNotReady", "MySQLBackup nightly is Running"), nil)}
	ledger.Status = appsv1alpha1.MySQLStatus{ObservedGeneration: 1, DesiredReplicas: 3, ReadyReplicas: 3, Image: "mariadb:10.11",
		Primary: "ledger-1", Epoch: 2, Conditions: conditionsWith(readyCondition(), nil),
		Members: []appsv1alpha1.MySQLMemberStatus{{Name: "ledger-0", Role: appsv1alpha1.RoleReplica}, {Name: "ledger-1", Role: appsv1alpha1.RolePrimary},
			{Name: "ledger-2", Role: appsv1alpha1.RoleReplica, Errant: true}},
		PointInTimeRecovery: &appsv1alpha1.PointInTimeRecoveryStatus{Member: "ledger-1", RecoverableFrom: &since,
			RecoverableTo: &metav1.Time{Time: since.Add(8*time.Hour + 42*time.Minute + 7*time.Second)}, LagSeconds: 3}}
	blog.Status = appsv1alpha1.WordPressStatus{ObservedGeneration: 1,
		Conditions: conditionsWith(notReady("WaitingForDatabase", "MySQL blog-mysql is not Available"), nil)}
	for _, obj := range []client.Object{web, next, broken, cache, workers, db, dbCopy, ledger, blog} {
		setStatus(t, obj)
	}
}

func TestStatusSaysHowEachInstanceIs(t *testing.T) {
	ns := newNamespace(t, "shop")
	createInStates(t, ns)
	other := newNamespace(t, "status-other")
	ready := webServer(other, "site", 1)
	create(t, ready)
	ready.Status = appsv1alpha1.WebServerStatus{ObservedGeneration: 1, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1,
		Image: "nginx:1.27.4", Conditions: conditionsWith(readyCondition(), nil)}
	setStatus(t, ready)

	golden(t, "status.golden", succeeds(t, "status", "-n", ns))
	golden(t, "status-webservers.golden", succeeds(t, "status", "-n", ns, "ws"))

	all := succeeds(t, "status", "-A")
	for _, line := range []string{`(?m)^shop +webserver/web +3/3 `, `(?m)^status-other +webserver/site +1/1 +nginx:1.27.4 +ready$`} {
		if !regexp.MustCompile(line).MatchString(all) {
			t.Errorf("status -A lacks %q:\n%s", line, all)
		}
	}
	one := succeeds(t, "status", "-n", ns, "mysql/db", "-o", "yaml")
	if !strings.Contains(one, "kind: MySQL\n") || !strings.Contains(one, "reason: ImagePullBackOff") {
		t.Errorf("status mysql/db -o yaml:\n%s", one)
	}
	list := succeeds(t, "status", "-n", ns, "wp", "-o", "json")
	if !strings.Contains(list, `"kind": "WordPress"`) {
		t.Errorf("status wp -o json:\n%s", list)
	}
}

func TestStatusRefusesWhatItCannotDo(t *testing.T) {
	empty := newNamespace(t, "empty")
	r := kubectlAppkeeper(t, "status", "-n", empty)
	if r.code != 0 || r.stdout != "" || r.stderr != "No appkeeper applications found in namespace empty.\n" {
		t.Errorf("status in an empty namespace: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	fails(t, 2, []string{`unknown kind "deployment"`, "webserver (ws)"}, "status", "deployment")
	fails(t, 1, []string{"webserver/nope in namespace empty: not found"}, "status", "-n", empty, "ws/nope")
	fails(t, 2, []string{"-o table: the formats are json and yaml"}, "status", "-o", "table")
	fails(t, 2, []string{"unknown flag: --bogus"}, "status", "--bogus")
	fails(t, 1, []string{"kubeconfig"}, "status", "--context", "nowhere")
}
