package kubectlplugin_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// child is an object the operator would make for owner, labelled as it labels them.
func child(owner client.Object, kind, name string, labels map[string]string) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: name, Labels: map[string]string{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue}}
	for k, v := range labels {
		meta.Labels[k] = v
	}
	if kind != "" {
		meta.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: appsv1alpha1.GroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true),
		}}
	}
	return meta
}

func headless(meta metav1.ObjectMeta) *corev1.Service {
	return &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 3306, Protocol: corev1.ProtocolTCP}}}}
}

func TestTreeShowsChildrenAndTheirHealth(t *testing.T) {
	ns := newNamespace(t, "tree")
	db := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	create(t, db)
	db.Status = appsv1alpha1.MySQLStatus{ObservedGeneration: 1, DesiredReplicas: 1, ReadyReplicas: 0, Image: "mysql:8.4.6",
		Conditions: conditionsWith(notReady("ReplicasNotReady", "0 of 1 ready"), nil),
		Members:    []appsv1alpha1.MySQLMemberStatus{{Name: "db-0", Role: appsv1alpha1.RoleUnknown, Message: "dial tcp 10.0.0.7:3306: connect: connection refused"}},
		PointInTimeRecovery: &appsv1alpha1.PointInTimeRecoveryStatus{
			Message: "the shipper of db-0 does not ship: its server is not open to writes yet"}}
	setStatus(t, db)
	pods := db.SelectorLabels()
	sts := &appsv1.StatefulSet{ObjectMeta: child(db, "MySQL", "db", pods), Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: pods},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pods}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysql", Image: "mysql:8.4.6"}}}},
	}}
	create(t, sts)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-0", Labels: pods, OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: sts.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysql", Image: "mysql:8.4.6"}}}}
	// Kept without an owner under deletionPolicy Retain: found by the names MySQL gives them.
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: child(db, "", db.DataClaimName(), pods), Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}}}
	credentials := &corev1.Secret{ObjectMeta: child(db, "", db.GeneratedSecretName(), pods), StringData: map[string]string{"password": "p", "root-password": "r"}}
	// A claim of the same labels but of no name MySQL gives, and owned by nothing: not a child.
	stray := &corev1.Secret{ObjectMeta: child(db, "", "db-something-else", pods)}
	backup := &appsv1alpha1.MySQLBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-nightly", Labels: map[string]string{appsv1alpha1.LabelMySQL: "db"}},
		Spec: appsv1alpha1.MySQLBackupSpec{MySQLName: "db"}}
	create(t, pod, claim, credentials, stray, backup,
		headless(child(db, "MySQL", db.HeadlessServiceName(), pods)),
		&corev1.ConfigMap{ObjectMeta: child(db, "MySQL", db.ConfigMapName(), pods), Data: map[string]string{"my.cnf": ""}})

	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "mysql", Image: "mysql:8.4.6", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}
	setStatus(t, pod)
	claim.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}
	setStatus(t, claim)
	backup.Status = appsv1alpha1.MySQLBackupStatus{Phase: appsv1alpha1.BackupSucceeded, Size: 48213312, Verification: appsv1alpha1.VerificationPassed}
	setStatus(t, backup)

	golden(t, "tree-mysql.golden", succeeds(t, "tree", "-n", ns, "mysql/db"))

	yaml := succeeds(t, "tree", "-n", ns, "my/db", "-o", "yaml")
	for _, want := range []string{"kind: List", "kind: StatefulSet", "name: data-db-0", "kind: MySQLBackup"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("tree -o yaml lacks %q", want)
		}
	}
	// A user who may not read Secrets still gets the rest of the tree, and is told what is left out.
	read := []string{"get", "list", "watch"}
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "viewer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{appsv1alpha1.GroupVersion.Group}, Resources: []string{"*"}, Verbs: read},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets"}, Verbs: read},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"services", "configmaps", "persistentvolumeclaims", "pods"}, Verbs: read},
	}}, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "viewer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "viewer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "viewer"}}})
	r := kubectlAppkeeper(t, "tree", "-n", ns, "mysql/db", "--as", "viewer")
	if r.code != 0 || strings.Contains(r.stdout, "Secret/") || !strings.Contains(r.stdout, "PersistentVolumeClaim/data-db-0") ||
		r.stderr != "Warning: you may not list Secrets in namespace tree: the tree leaves them out\n" {
		t.Errorf("tree as a user who may not list Secrets: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	fails(t, 2, []string{`"mysql" names no instance: write mysql/<name>`}, "tree", "mysql")
	fails(t, 2, []string{"tree takes 1 argument(s), got 0"}, "tree")
}
