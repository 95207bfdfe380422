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
	// claim is the PersistentVolumeClaim holding the resource's data, if it has one.
	claim string
	// backupPolicy is a MySQL's spec.backup, whose schedule says how often it is backed up.
	backupPolicy *appsv1alpha1.MySQLBackupPolicy
}

func webServers(list *appsv1alpha1.WebServerList) []instance {
	out := make([]instance, 0, len(list.Items))
	for i := range list.Items {
		ws := &list.Items[i]
		out = append(out, instance{kind: "WebServer", namespace: ws.Namespace, name: ws.Name, conditions: ws.Status.Conditions,
			desired: ws.DesiredReplicas(), ready: ws.Status.ReadyReplicas, rollbacks: ws.Status.Rollout.Rollbacks})
	}
	return out
}

func memcacheds(list *appsv1alpha1.MemcachedList) []instance {
	out := make([]instance, 0, len(list.Items))
	for i := range list.Items {
		mc := &list.Items[i]
		out = append(out, instance{kind: "Memcached", namespace: mc.Namespace, name: mc.Name, conditions: mc.Status.Conditions,
			desired: mc.DesiredSize(), ready: mc.Status.ReadyReplicas, rollbacks: mc.Status.Rollout.Rollbacks})
	}
	return out
}

func podSets(list *appsv1alpha1.PodSetList) []instance {
	out := make([]instance, 0, len(list.Items))
	for i := range list.Items {
		ps := &list.Items[i]
		out = append(out, instance{kind: "PodSet", namespace: ps.Namespace, name: ps.Name, conditions: ps.Status.Conditions,
			desired: ps.DesiredReplicas(), ready: ps.Status.ReadyReplicas, rollbacks: ps.Status.Rollout.Rollbacks})
	}
	return out
}

// mySQLs are the MySQLs as instances; a MySQL always runs one server.
func mySQLs(list *appsv1alpha1.MySQLList) []instance {
	out := make([]instance, 0, len(list.Items))
	for i := range list.Items {
		m := &list.Items[i]
		out = append(out, instance{kind: kindMySQL, namespace: m.Namespace, name: m.Name, conditions: m.Status.Conditions,
			desired: 1, ready: m.Status.ReadyReplicas, rollbacks: m.Status.Rollout.Rollbacks, claim: m.DataClaimName(),
			backupPolicy: m.Spec.Backup})
	}
	return out
}

func wordPresses(list *appsv1alpha1.WordPressList) []instance {
	out := make([]instance, 0, len(list.Items))
	for i := range list.Items {
		wp := &list.Items[i]
		out = append(out, instance{kind: kindWordPress, namespace: wp.Namespace, name: wp.Name, conditions: wp.Status.Conditions,
			desired: wp.DesiredReplicas(), ready: wp.Status.ReadyReplicas, rollbacks: wp.Status.Rollout.Rollbacks, claim: wp.ContentClaimName()})
	}
	return out
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
