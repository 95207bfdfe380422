package memcached_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

// A Memcached of more than one member has a disruption budget that lets a drain take one member at
// a time, and members that prefer nodes apart; at one member the budget goes.
func TestDisruptionBudgetAndSpread(t *testing.T) {
	ns := newNamespace(t)
	mc := createMemcached(t, ns, 3, nil)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.DisruptionBudgetProblem(ctx, k8s, mc)
	})
	sts, _ := childrenExist(t, ns)
	if err := inspect.SpreadProblem(sts.Spec.Template.Spec.Affinity, mc.SelectorLabels()); err != nil {
		t.Error(err)
	}
	if err := k8s.Patch(context.Background(), mc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":1}}`))); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return inspect.NoDisruptionBudget(ctx, k8s, mc)
	})
}
