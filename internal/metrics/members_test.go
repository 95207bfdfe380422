package metrics

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// cluster is a MySQL of members members in namespace shop, its status s.
func cluster(name string, members int32, s appsv1alpha1.MySQLStatus) appsv1alpha1.MySQL {
	return appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec: appsv1alpha1.MySQLSpec{Members: members}, Status: s}
}

// ledger is a cluster of three after a failover from ledger-0 to ledger-1: ledger-0 follows the
// new primary 12 seconds behind, ledger-2 cannot be read.
func ledger() appsv1alpha1.MySQL {
	m := cluster("ledger", 3, appsv1alpha1.MySQLStatus{ReadyReplicas: 2, Primary: "ledger-1", Epoch: 2,
		Members: []appsv1alpha1.MySQLMemberStatus{
			{Name: "ledger-0", Role: appsv1alpha1.RoleReplica, Position: "0-101-2040", LagSeconds: ptr.To[int64](12)},
			{Name: "ledger-1", Role: appsv1alpha1.RolePrimary, Position: "0-102-2043", AcknowledgingReplicas: ptr.To[int32](1), CommitsAlone: true},
			{Name: "ledger-2", Role: appsv1alpha1.RoleUnknown, Message: "its pod has not started"},
		},
		PointInTimeRecovery: &appsv1alpha1.PointInTimeRecoveryStatus{Member: "ledger-1", LagSeconds: 42,
			Message: "the shipper of ledger-1 fails: cannot write"}})
	m.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{Schedule: "0 2 * * *", PointInTimeRecovery: &appsv1alpha1.PointInTimeRecovery{Enabled: true}}
	return m
}

// exposition is the text a scrape of a collector reading snap shows of the families names.
func exposition(t *testing.T, snap snapshot, names ...string) string {
	t.Helper()
	ready := make(chan struct{})
	close(ready)
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(NewCollector(&listsReader{snap: snap}, ready))
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, f := range families {
		if !slices.Contains(names, f.GetName()) {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(&out, f); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

// samples are the lines of text that are not comments.
func samples(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// A cluster's members, their lag, its epoch and whether its primary waits for a replica come
// from its status; a single server and a
// cluster whose members were not read yet have none of them.
func TestClusterMembersAreReported(t *testing.T) {
	var snap snapshot
	snap.mySQLs.Items = []appsv1alpha1.MySQL{
		ledger(),
		cluster("fresh", 2, appsv1alpha1.MySQLStatus{}),
		cluster("single", 0, appsv1alpha1.MySQLStatus{ReadyReplicas: 1}),
	}
	got := samples(exposition(t, snap, "appkeeper_mysql_member_role", "appkeeper_mysql_member_lag_seconds",
		"appkeeper_mysql_primary_epoch", "appkeeper_resource_replicas_desired", "appkeeper_mysql_acknowledging_replicas", "appkeeper_mysql_commits_alone"))
	want := []string{
		`appkeeper_mysql_acknowledging_replicas{kind="MySQL",name="ledger",namespace="shop"} 1`,
		`appkeeper_mysql_commits_alone{kind="MySQL",name="ledger",namespace="shop"} 1`,
		`appkeeper_mysql_member_lag_seconds{kind="MySQL",member="ledger-0",name="ledger",namespace="shop"} 12`,
		`appkeeper_mysql_member_role{kind="MySQL",member="ledger-0",name="ledger",namespace="shop",role="replica"} 1`,
		`appkeeper_mysql_member_role{kind="MySQL",member="ledger-1",name="ledger",namespace="shop",role="primary"} 1`,
		`appkeeper_mysql_member_role{kind="MySQL",member="ledger-2",name="ledger",namespace="shop",role="unknown"} 1`,
		`appkeeper_mysql_primary_epoch{kind="MySQL",name="ledger",namespace="shop"} 2`,
		`appkeeper_resource_replicas_desired{kind="MySQL",name="fresh",namespace="shop"} 2`,
		`appkeeper_resource_replicas_desired{kind="MySQL",name="ledger",namespace="shop"} 3`,
		`appkeeper_resource_replicas_desired{kind="MySQL",name="single",namespace="shop"} 1`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("series\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The archive's lag and whether it can restore come from the status of a MySQL with
// point-in-time recovery; one without it, or whose shipper was not read yet, has neither.
func TestBinlogArchiveIsReported(t *testing.T) {
	healthy := cluster("healthy", 0, appsv1alpha1.MySQLStatus{PointInTimeRecovery: &appsv1alpha1.PointInTimeRecoveryStatus{
		Member: "healthy-0", RecoverableFrom: &metav1.Time{}, RecoverableFromBackup: "monday"}})
	healthy.Spec.Backup = &appsv1alpha1.MySQLBackupPolicy{PointInTimeRecovery: &appsv1alpha1.PointInTimeRecovery{Enabled: true}}
	unread := cluster("unread", 0, appsv1alpha1.MySQLStatus{})
	unread.Spec.Backup = healthy.Spec.Backup
	var snap snapshot
	snap.mySQLs.Items = []appsv1alpha1.MySQL{ledger(), healthy, unread, cluster("single", 0, appsv1alpha1.MySQLStatus{})}
	got := samples(exposition(t, snap, "appkeeper_mysql_binlog_archive_lag_seconds", "appkeeper_mysql_binlog_archive_recoverable"))
	want := []string{
		`appkeeper_mysql_binlog_archive_lag_seconds{kind="MySQL",name="healthy",namespace="shop"} 0`,
		`appkeeper_mysql_binlog_archive_lag_seconds{kind="MySQL",name="ledger",namespace="shop"} 42`,
		`appkeeper_mysql_binlog_archive_recoverable{kind="MySQL",name="healthy",namespace="shop"} 1`,
		`appkeeper_mysql_binlog_archive_recoverable{kind="MySQL",name="ledger",namespace="shop"} 0`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("series\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A replica that has caught up reports a lag of 0, not none; a role this operator does not know
// reads as unknown.
func TestMemberLagAndRoleEdges(t *testing.T) {
	m := cluster("pair", 2, appsv1alpha1.MySQLStatus{Primary: "pair-0", Epoch: 1,
		Members: []appsv1alpha1.MySQLMemberStatus{
			{Name: "pair-0", Role: "Witness"},
			{Name: "pair-1", Role: appsv1alpha1.RoleReplica, LagSeconds: ptr.To[int64](0)},
		}})
	var snap snapshot
	snap.mySQLs.Items = []appsv1alpha1.MySQL{m}
	got := samples(exposition(t, snap, "appkeeper_mysql_member_role", "appkeeper_mysql_member_lag_seconds"))
	want := []string{
		`appkeeper_mysql_member_lag_seconds{kind="MySQL",member="pair-1",name="pair",namespace="shop"} 0`,
		`appkeeper_mysql_member_role{kind="MySQL",member="pair-0",name="pair",namespace="shop",role="unknown"} 1`,
		`appkeeper_mysql_member_role{kind="MySQL",member="pair-1",name="pair",namespace="shop",role="replica"} 1`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("series\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
