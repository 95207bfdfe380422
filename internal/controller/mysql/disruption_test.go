package mysql_test

import (
	"context"
	"testing"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

// A MySQL cluster has a disruption budget that lets a drain take one member at a time, and members
// that prefer nodes apart; a single server has no budget, which would only delay a drain.
func TestDisruptionBudgetAndSpread(t *testing.T) {
	cluster := createMySQL(t, newNamespace(t), func(m *appsv1alpha1.MySQL) { m.Spec.Members = 3 })
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.DisruptionBudgetProblem(ctx, k8s, cluster)
	})
	c := childrenExist(t, cluster.Namespace, true)
	if err := inspect.SpreadProblem(c.sts.Spec.Template.Spec.Affinity, cluster.SelectorLabels()); err != nil {
		t.Error(err)
	}

	single := createMySQL(t, newNamespace(t), nil)
	childrenExist(t, single.Namespace, true)
	if err := inspect.NoDisruptionBudget(context.Background(), k8s, single); err != nil {
		t.Error(err)
	}
}
