package kubesim

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
)

// MarkDeploymentReady writes the status the Deployment controller would write for the Deployment
// ns/name once every pod of its current template is available.
func MarkDeploymentReady(t *testing.T, c client.Client, ns, name string, timeout time.Duration) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		dep := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
			return err
		}
		n := *dep.Spec.Replicas
		dep.Status = appsv1.DeploymentStatus{
			ObservedGeneration: dep.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		}
		return c.Status().Update(ctx, dep)
	})
}
