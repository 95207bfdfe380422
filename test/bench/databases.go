package main

import (
	"crypto/rand"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/resources/wordpress"
)

// password is made as the operator makes every generated password and key: the floor's Secrets
// then weigh what the operator's weigh.
func password() []byte { return []byte(rand.Text()) }

// mysqlChildren are the children the operator makes for a new MySQL, in the order of its pass: the
// generated credentials, the headless and client Services, the exporter account when monitoring is
// on, the backup account with its init-file, my.cnf, and the StatefulSet, whose claim template
// makes the data volume. A PodMonitor is made only where prometheus-operator is installed, which
// the local cluster is not.
func mysqlChildren(m *appsv1alpha1.MySQL) []client.Object {
	children := []client.Object{
		typedFrom[corev1.Secret](mysql.Secret(m, password(), password())),
		typedFrom[corev1.Service](mysql.HeadlessService(m)),
		typedFrom[corev1.Service](mysql.Service(m)),
	}
	exporter := mysql.ExporterAccount{Enabled: m.Spec.Monitoring.Enabled}
	if exporter.Enabled {
		exporter.Password = password()
		children = append(children, typedFrom[corev1.Secret](mysql.ExporterAccountSecret(m, exporter.Password)))
	}
	return append(children,
		typedFrom[corev1.Secret](mysql.BackupAccountSecret(m, password(), exporter, mysql.ClusterAccount{})),
		typedFrom[corev1.ConfigMap](mysql.ConfigMap(m)),
		typedFrom[appsv1.StatefulSet](mysql.StatefulSet(m, nil, "")),
	)
}

// wordpressChildren are the children the operator makes for a new WordPress that runs its own
// MySQL: the MySQL itself and, as the operator's MySQL controller makes them, that MySQL's
// children, built from the MySQL as the API server defaults it; then the salts, the wp-content
// claim and the Service; and last the Deployment, which wordpressGate holds back.
func wordpressChildren(wp *appsv1alpha1.WordPress, defaulted func(client.Object) error) ([]client.Object, error) {
	if !wp.OwnsMySQL() {
		return nil, fmt.Errorf("WordPress %s uses MySQL %s: the floor only builds a WordPress that runs its own", wp.Name, wp.MySQLName())
	}
	db := wordpress.MySQL(wp)
	db.OwnerReferences = nil
	server := db.DeepCopy()
	if err := defaulted(server); err != nil {
		return nil, fmt.Errorf("default MySQL %s: %w", db.Name, err)
	}
	children := append([]client.Object{db}, mysqlChildren(server)...)
	return append(children,
		typedFrom[corev1.Secret](wordpress.SaltsSecret(wp, wordpress.GenerateSalts())),
		typedFrom[corev1.PersistentVolumeClaim](wordpress.ContentClaim(wp)),
		typedFrom[corev1.Service](wordpress.Service(wp)),
		typedFrom[appsv1.Deployment](wordpress.Deployment(wp, server)),
	), nil
}

// wordpressGate holds a WordPress's Deployment back until its MySQL's StatefulSet is ready, as the
// operator holds it until the MySQL is Available. Its server's pod is scheduled only once the
// data claim is bound, the local cluster's StorageClass binding at once, so a ready StatefulSet
// means a bound claim too: what Available asks besides. The floor skips only the MySQL's status
// report in between, which is part of what the operator is measured on.
var wordpressGate = &gate{
	sample: func() client.Object { return &appsv1.StatefulSet{} },
	name: func(crName string) string {
		wp := &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Name: crName}}
		return (&appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Name: wp.MySQLName()}}).ChildName()
	},
	ready: statefulSetReady,
	holds: func(obj client.Object) bool {
		_, ok := obj.(*appsv1.Deployment)
		return ok
	},
}
