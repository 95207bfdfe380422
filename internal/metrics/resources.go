package metrics

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// instance is what the metrics say of one resource, whatever its kind.
type instance struct {
	kind, namespace, name string
	conditions            []metav1.Condition
	desired, ready        int32
	rollbacks             int32
	// claims are the PersistentVolumeClaims holding the resource's data: one per MySQL member.
	claims []string
	// backupPolicy is a MySQL's spec.backup, whose schedule says how often it is backed up.
	backupPolicy *appsv1alpha1.MySQLBackupPolicy
	// members and epoch are a MySQL cluster's; a single server's status has neither to tell.
	members []appsv1alpha1.MySQLMemberStatus
	epoch   int64
	// archive is what a MySQL's binary log archive can restore, while it is on.
	archive *appsv1alpha1.PointInTimeRecoveryStatus
}

// instancesOf is items as instances, each made by of.
func instancesOf[T any](items []T, of func(*T) instance) []instance {
	out := make([]instance, 0, len(items))
	for i := range items {
		out = append(out, of(&items[i]))
	}
	return out
}

func webServer(ws *appsv1alpha1.WebServer) instance {
	return instance{kind: "WebServer", namespace: ws.Namespace, name: ws.Name, conditions: ws.Status.Conditions,
		desired: ws.DesiredReplicas(), ready: ws.Status.ReadyReplicas, rollbacks: ws.Status.Rollout.Rollbacks}
}

func memcached(mc *appsv1alpha1.Memcached) instance {
	return instance{kind: "Memcached", namespace: mc.Namespace, name: mc.Name, conditions: mc.Status.Conditions,
		desired: mc.DesiredSize(), ready: mc.Status.ReadyReplicas, rollbacks: mc.Status.Rollout.Rollbacks}
}

func podSet(ps *appsv1alpha1.PodSet) instance {
	return instance{kind: "PodSet", namespace: ps.Namespace, name: ps.Name, conditions: ps.Status.Conditions,
		desired: ps.DesiredReplicas(), ready: ps.Status.ReadyReplicas, rollbacks: ps.Status.Rollout.Rollbacks}
}

// mySQL is a MySQL as an instance, one replica per member.
func mySQL(m *appsv1alpha1.MySQL) instance {
	in := instance{kind: kindMySQL, namespace: m.Namespace, name: m.Name, conditions: m.Status.Conditions,
		desired: m.MemberCount(), ready: m.Status.ReadyReplicas, rollbacks: m.Status.Rollout.Rollbacks, claims: m.DataClaimNames(),
		backupPolicy: m.Spec.Backup}
	if m.Clustered() {
		in.members, in.epoch = m.Status.Members, m.Status.Epoch
	}
	if m.Spec.Backup.PointInTimeRecoveryEnabled() {
		in.archive = m.Status.PointInTimeRecovery
	}
	return in
}

func wordPress(wp *appsv1alpha1.WordPress) instance {
	return instance{kind: kindWordPress, namespace: wp.Namespace, name: wp.Name, conditions: wp.Status.Conditions,
		desired: wp.DesiredReplicas(), ready: wp.Status.ReadyReplicas, rollbacks: wp.Status.Rollout.Rollbacks, claims: []string{wp.ContentClaimName()}}
}

// The kinds that have backups.
const (
	kindMySQL     = "MySQL"
	kindWordPress = "WordPress"
)

// conditionStatuses are the values of the status label, in the order of metav1's statuses.
var conditionStatuses = [...]struct {
	status metav1.ConditionStatus
	label  string
}{{metav1.ConditionTrue, "true"}, {metav1.ConditionFalse, "false"}, {metav1.ConditionUnknown, "unknown"}}

// statusLabel is the status label of s; anything but True or False is unknown.
func statusLabel(s metav1.ConditionStatus) string {
	for _, cs := range conditionStatuses {
		if cs.status == s {
			return cs.label
		}
	}
	return "unknown"
}
