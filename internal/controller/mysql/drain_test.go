package mysql

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// inStep is a replica of the primary that applies without lag, holding the transactions up to seq.
func inStep(t *testing.T, name, gtid string) replication.View {
	t.Helper()
	held, err := replication.ParsePosition(gtid)
	if err != nil {
		t.Fatal(err)
	}
	return replication.View{Name: name, Observation: replication.Observation{ReadOnly: true, Binlog: held, Applied: held,
		Replica: &replication.ReplicaStatus{Receiving: "Yes", Applying: true, Received: held}}}
}

func TestDrainTarget(t *testing.T) {
	m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1alpha1.MySQLSpec{Members: 3}}
	m.Status.Primary = "db-0"
	primary := replication.View{Name: "db-0", Observation: replication.Observation{}}
	nodes := map[string]string{"db-0": "a", "db-1": "b", "db-2": "c"}
	for _, tt := range []struct {
		name      string
		views     []replication.View
		nodes     map[string]string
		goingAway map[string]bool
		want      string
	}{
		{"the replica that holds the most", []replication.View{primary, inStep(t, "db-1", "0-1-10"), inStep(t, "db-2", "0-1-12")},
			nodes, map[string]bool{"a": true}, "db-2"},
		{"a replica on a cordoned node is passed over", []replication.View{primary, inStep(t, "db-1", "0-1-10"), inStep(t, "db-2", "0-1-12")},
			nodes, map[string]bool{"a": true, "c": true}, "db-1"},
		{"a replica on the primary's own node is passed over", []replication.View{primary, inStep(t, "db-1", "0-1-10"), inStep(t, "db-2", "0-1-12")},
			map[string]string{"db-0": "a", "db-1": "b", "db-2": "a"}, map[string]bool{"a": true}, "db-1"},
		{"a replica that cannot be read is passed over", []replication.View{primary, inStep(t, "db-1", "0-1-10"), {Name: "db-2", Err: errors.New("refused")}},
			nodes, map[string]bool{"a": true}, "db-1"},
		{"a replica not yet on a node is passed over", []replication.View{primary, inStep(t, "db-1", "0-1-10")},
			map[string]string{"db-0": "a", "db-1": ""}, map[string]bool{"a": true}, ""},
		{"every node cordoned: the primary stays", []replication.View{primary, inStep(t, "db-1", "0-1-10"), inStep(t, "db-2", "0-1-12")},
			nodes, map[string]bool{"a": true, "b": true, "c": true}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := drainTarget(m, tt.views, tt.nodes, tt.goingAway); got != tt.want {
				t.Errorf("drainTarget = %q, want %q", got, tt.want)
			}
		})
	}
}

// A cluster's two budgets never select the same member, whatever its role label: the eviction API
// refuses a pod two budgets select. The primary's allows no eviction; the other lets one go.
func TestBudgetsNeverOverlap(t *testing.T) {
	m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1alpha1.MySQLSpec{Members: 3}}
	b := budgets(m)
	if len(b) != 2 {
		t.Fatalf("%d budgets, want 2", len(b))
	}
	for _, role := range []string{appsv1alpha1.RoleLabelPrimary, appsv1alpha1.RoleLabelReplica, ""} {
		pod := labels.Set(m.SelectorLabels())
		if role != "" {
			pod = labels.Merge(pod, labels.Set{appsv1alpha1.LabelRole: role})
		}
		matched := 0
		for _, budget := range b {
			selector, err := metav1.LabelSelectorAsSelector(&budget.Selector)
			if err != nil {
				t.Fatal(err)
			}
			if selector.Matches(pod) {
				matched++
			}
		}
		if matched != 1 {
			t.Errorf("a member labelled %q is selected by %d budgets, want 1", role, matched)
		}
	}
	if *b[0].MinAvailable != 1 || *b[1].MinAvailable != 1 {
		t.Errorf("minAvailable = %d (primary), %d (others); want 1 and 1 for 3 members", *b[0].MinAvailable, *b[1].MinAvailable)
	}
	if single := budgets(&appsv1alpha1.MySQL{}); single != nil {
		t.Errorf("a single server has budgets %+v", single)
	}
}

func TestADrainWaitingIsToldOnceADrain(t *testing.T) {
	var drains waitingDrains
	m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "ledger"}}
	told := 0
	warn := func() { told++ }
	drains.warnOnce(m, "node-a", warn)
	drains.warnOnce(m, "node-a", warn)
	if told != 1 {
		t.Fatalf("told %d times in one drain, want once", told)
	}
	drains.over(m)
	drains.warnOnce(m, "node-a", warn)
	if told != 2 {
		t.Errorf("told %d times after the node was drained a second time, want twice", told)
	}
	drains.warnOnce(m, "node-b", warn)
	if told != 3 {
		t.Errorf("told %d times once the primary's node changed, want three times", told)
	}
}
