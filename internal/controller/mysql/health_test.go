package mysql_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// Flux, like every tool built on kstatus, judges a MySQL healthy by kstatus's verdict: it must not
// read as healthy while its credentials Secret is missing, before the server serves or while a
// change restarts it.
func TestGitOpsToolsReadTheHealthOfAMySQL(t *testing.T) {
	ns := newNamespace(t)
	m := createMySQL(t, ns, func(m *appsv1alpha1.MySQL) {
		m.Spec.CredentialsSecretRef = &appsv1alpha1.SecretReference{Name: "mine"}
	})
	await.RequireHealth(t, k8s, m, status.InProgressStatus)
	await.WaitForHealth(t, k8s, m, status.FailedStatus, timeout)

	createCredentialsSecret(t, ns, "mine")
	childrenExist(t, ns, false)
	await.WaitForHealth(t, k8s, m, status.InProgressStatus, timeout)
	runServer(t, ns, "db")
	await.WaitForHealth(t, k8s, m, status.CurrentStatus, timeout)
	if got := get(t, ns, "db", &appsv1alpha1.MySQL{}); got.Status.DesiredReplicas != 1 || got.Status.ReadyReplicas != 1 {
		t.Errorf("status desiredReplicas/readyReplicas = %d/%d, want 1/1", got.Status.DesiredReplicas, got.Status.ReadyReplicas)
	}

	patchSpec(t, ns, `{"spec":{"config":["max_connections=500"]}}`)
	await.RequireHealth(t, k8s, m, status.InProgressStatus)
	waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, nil)
	await.RequireHealth(t, k8s, m, status.InProgressStatus)
	markStatefulSetReady(t, ns, "db")
	await.WaitForHealth(t, k8s, m, status.CurrentStatus, timeout)
}
