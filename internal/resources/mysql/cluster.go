package mysql

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// ClusterUser is the account the operator manages a cluster's replication with, and replicas
// receive from their primary with. It holds no privilege on any data.
const ClusterUser = "appkeeper_replication"

// ClusterPrivileges let the account receive the binary log, read every member's replication
// state, move the primary's role (read_only, semi-synchronous settings, CHANGE MASTER, RESET
// SLAVE), end the client sessions of a demoted primary, and copy a member's files with
// mariadb-backup (RELOAD, PROCESS, BINLOG MONITOR), which reads no row through the server.
const ClusterPrivileges = "REPLICATION SLAVE, REPLICATION SLAVE ADMIN, REPLICATION MASTER ADMIN, BINLOG MONITOR, SLAVE MONITOR, " +
	"READ_ONLY ADMIN, CONNECTION ADMIN, RELOAD, PROCESS"

// ClusterAccount is the replication account as the init-file keeps it: Password is nil for a
// MySQL of one member, which has none.
type ClusterAccount struct {
	Password []byte
}

// sql writes nothing to the binary log, where every member would otherwise record its own start
// as a transaction the others never saw; then it keeps the replication account.
func (a ClusterAccount) sql() string {
	if a.Password == nil {
		return ""
	}
	return fmt.Sprintf("SET SESSION sql_log_bin = 0;\n"+
		"CREATE USER IF NOT EXISTS %[1]s IDENTIFIED BY '%[2]s';\n"+
		"ALTER USER %[1]s IDENTIFIED BY '%[2]s';\n"+
		"GRANT %[3]s ON *.* TO %[1]s;\n", fmt.Sprintf("'%s'@'%%'", ClusterUser), a.Password, ClusterPrivileges)
}

// ClusterAccountSecret is the Secret of the replication account. It goes with the MySQL, as the
// backup account's does.
func ClusterAccountSecret(m *appsv1alpha1.MySQL, password []byte) *corev1ac.SecretApplyConfiguration {
	return corev1ac.Secret(m.ClusterAccountSecretName(), m.Namespace).
		WithLabels(parts.Labels(m.SelectorLabels(), appsv1alpha1.ManagedByValue)).
		WithOwnerReferences(parts.ControllerReference(m, gvk)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{
			appsv1alpha1.SecretKeyUser:     []byte(ClusterUser),
			appsv1alpha1.SecretKeyPassword: password,
		})
}

// ServerIDBase plus a member's ordinal is its server_id: stable across restarts and distinct
// within the cluster, and never 0, which MariaDB refuses to replicate with.
const ServerIDBase = 100

// memberOrdinalVar holds the member's ordinal, from its pod's index label.
const memberOrdinalVar = "MEMBER_ORDINAL"

// serverIDFlag gives mysqld its server_id. Kubernetes expands variables in arguments but does no
// arithmetic: "10" before an ordinal of one digit (members are at most 5) makes ServerIDBase plus
// the ordinal.
const serverIDFlag = "--server-id=10$(" + memberOrdinalVar + ")"

// affinity is the spec's, or for a cluster a preference for members on different nodes, so that
// one node's loss takes one member.
func affinity(m *appsv1alpha1.MySQL) *corev1.Affinity {
	if !m.Clustered() {
		return m.Spec.Affinity
	}
	return parts.AffinityOrSpread(m.Spec.Affinity, m.SelectorLabels())
}

// clusterCnf is what every member of a cluster runs with. Options MySQL lacks are loose, so that
// a MySQL server still starts and the operator can say why it does not replicate.
func clusterCnf() string {
	return strings.Join([]string{
		// One history, in GTID order, kept by every member: a replica logs what it applies, so
		// that any member can become the others' source.
		"log_bin=binlog",
		"relay_log=relay",
		"log_slave_updates=ON",
		"binlog_format=ROW",
		"sync_binlog=1",
		"innodb_flush_log_at_trx_commit=1",
		"loose-gtid_domain_id=0",
		"loose-gtid_strict_mode=ON",
		// Every member starts closed to writes and not replicating: the operator opens the member
		// it recorded as primary and points the others at it.
		"read_only=ON",
		"skip_slave_start=ON",
		"slave_net_timeout=5",
		// A replica acknowledges what it received. A primary waits for acknowledgements only once
		// the operator opens it: a replica that waited for its own acknowledgements would stop.
		"loose-rpl_semi_sync_slave_enabled=ON",
		"loose-rpl_semi_sync_master_enabled=OFF",
		// A member that crashed rolls back the transactions no replica acknowledged, instead of
		// committing what the cluster may have gone on without.
		"loose-init_rpl_role=SLAVE",
	}, "\n") + "\n"
}

// ReadService reaches the replicas of a cluster, for reads that may lag.
func ReadService(m *appsv1alpha1.MySQL) *corev1ac.ServiceApplyConfiguration {
	selector := m.SelectorLabels()
	selector[appsv1alpha1.LabelRole] = appsv1alpha1.RoleLabelReplica
	return service(m, m.ReadServiceName()).WithSpec(servicePorts(m).
		WithSelector(selector).
		WithType(corev1.ServiceTypeClusterIP))
}

// clientSelector selects the pods the client Service reaches: the one server, or a cluster's
// primary alone.
func clientSelector(m *appsv1alpha1.MySQL) map[string]string {
	selector := m.SelectorLabels()
	if m.Clustered() {
		selector[appsv1alpha1.LabelRole] = appsv1alpha1.RoleLabelPrimary
	}
	return selector
}
