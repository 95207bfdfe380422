package mysql

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

func cluster(members int32) *appsv1alpha1.MySQL {
	return mysql(func(m *appsv1alpha1.MySQL) { m.Spec.Members = members })
}

func TestClusterStatefulSet(t *testing.T) {
	sts := inspect.Decode[appsv1.StatefulSet](t, StatefulSet(cluster(3), nil, "tools:test"))
	if *sts.Spec.Replicas != 3 || sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement || sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		t.Errorf("replicas %d, pod management %q, update strategy %q: want 3 members started in parallel and replaced by the operator",
			*sts.Spec.Replicas, sts.Spec.PodManagementPolicy, sts.Spec.UpdateStrategy.Type)
	}
	server := sts.Spec.Template.Spec.Containers[0]
	if len(server.Args) != 1 || server.Args[0] != "--server-id=10$(MEMBER_ORDINAL)" {
		t.Errorf("args %q: want the server_id from the ordinal", server.Args)
	}
	var ordinal *corev1.EnvVar
	for i := range server.Env {
		if server.Env[i].Name == "MEMBER_ORDINAL" {
			ordinal = &server.Env[i]
		}
	}
	if ordinal == nil || ordinal.ValueFrom.FieldRef.FieldPath != "metadata.labels['apps.kubernetes.io/pod-index']" {
		t.Errorf("MEMBER_ORDINAL = %+v: want the pod's index label", ordinal)
	}
	anti := sts.Spec.Template.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 1 || anti[0].PodAffinityTerm.TopologyKey != corev1.LabelHostname {
		t.Errorf("anti-affinity %+v: want members preferring different nodes", anti)
	}

	pod := sts.Spec.Template.Spec
	if len(pod.InitContainers) != 2 || pod.InitContainers[0].Image != "tools:test" || pod.InitContainers[1].Name != SeedContainer ||
		pod.InitContainers[1].Image != pod.Containers[0].Image {
		t.Errorf("init containers %+v: want the tools installed, then the member seeded with the server's image", pod.InitContainers)
	}
	if len(pod.Containers) != 2 || pod.Containers[1].Name != DonorContainer || !pod.Containers[1].VolumeMounts[0].ReadOnly {
		t.Errorf("containers %+v: want the server, then a donor that reads the data read-only", pod.Containers)
	}
	for _, c := range append(pod.InitContainers[1:], pod.Containers[1]) {
		for _, e := range c.Env {
			if e.Value != "" && e.ValueFrom == nil && e.Name != "POD_NAME" {
				t.Errorf("%s: variable %s holds a literal value; secrets come by reference", c.Name, e.Name)
			}
		}
	}

	single := inspect.Decode[appsv1.StatefulSet](t, StatefulSet(mysql(nil), nil, "tools:test"))
	if *single.Spec.Replicas != 1 || single.Spec.PodManagementPolicy != "" || single.Spec.UpdateStrategy.Type != "" || len(single.Spec.Template.Spec.Containers[0].Args) != 0 ||
		single.Spec.Template.Spec.Affinity != nil || len(single.Spec.Template.Spec.InitContainers) != 0 || len(single.Spec.Template.Spec.Containers) != 1 {
		t.Errorf("a MySQL of one member changed: %+v", single.Spec)
	}
}

func TestClusterServices(t *testing.T) {
	client := inspect.Decode[corev1.Service](t, Service(cluster(3)))
	if client.Spec.Selector[appsv1alpha1.LabelRole] != appsv1alpha1.RoleLabelPrimary {
		t.Errorf("client Service selector %v: want the primary alone", client.Spec.Selector)
	}
	read := inspect.Decode[corev1.Service](t, ReadService(cluster(3)))
	if read.Name != "db-read" || read.Spec.Selector[appsv1alpha1.LabelRole] != appsv1alpha1.RoleLabelReplica ||
		read.Spec.Selector[appsv1alpha1.LabelInstance] != "db" {
		t.Errorf("read Service %s selector %v: want the replicas of db", read.Name, read.Spec.Selector)
	}
	if single := inspect.Decode[corev1.Service](t, Service(mysql(nil))); single.Spec.Selector[appsv1alpha1.LabelRole] != "" {
		t.Errorf("a MySQL of one member selects %v", single.Spec.Selector)
	}
}

func TestClusterAccounts(t *testing.T) {
	sql := AccountsSQL([]byte("backup"), ExporterAccount{}, ClusterAccount{Password: []byte("replicate")})
	if !strings.HasPrefix(sql, "SET SESSION sql_log_bin = 0;\n") {
		t.Errorf("the init-file writes to the binary log:\n%s", sql)
	}
	if !strings.Contains(sql, "GRANT "+ClusterPrivileges+" ON *.* TO 'appkeeper_replication'@'%'") {
		t.Errorf("no replication account:\n%s", sql)
	}
	if single := AccountsSQL([]byte("backup"), ExporterAccount{}, ClusterAccount{}); strings.Contains(single, "replication") || strings.Contains(single, "sql_log_bin") {
		t.Errorf("a MySQL of one member has cluster accounts:\n%s", single)
	}
}

// TestClusterConfigOnMariaDB starts MariaDB with a member's my.cnf and init-file: it must accept
// every option, log nothing of its start to the binary log, start closed to writes, and give the
// replication account what the operator uses.
func TestClusterConfigOnMariaDB(t *testing.T) {
	db := newMariaDB(t)
	initFile := filepath.Join(t.TempDir(), AccountsFile)
	writeFile(t, initFile, AccountsSQL([]byte("backup"), ExporterAccount{}, ClusterAccount{Password: []byte("replicate")}))
	// The init-file of my.cnf is at the pod's path: the test's own takes its place.
	db.start(t, append(flags(MyCnf(cluster(3)), "init-file"), "--init-file="+initFile, "--server-id=101")...)
	for query, want := range map[string]string{
		"SELECT @@read_only, @@gtid_strict_mode, @@log_slave_updates, @@binlog_format, @@sync_binlog": "1\t1\t1\tROW\t1",
		"SELECT @@rpl_semi_sync_slave_enabled, @@rpl_semi_sync_master_enabled":                        "1\t0",
		"SELECT @@gtid_binlog_pos": "",
	} {
		if got := db.query(t, query); got != want {
			t.Errorf("%s = %q, want %q", query, got, want)
		}
	}
	if got := db.queryAs(t, ClusterUser, "replicate", "SHOW GRANTS"); !strings.Contains(got, "READ_ONLY ADMIN") && !strings.Contains(got, "READ ONLY ADMIN") {
		t.Errorf("grants of %s: %s", ClusterUser, got)
	}
}
