package mysql_test

import (
	"context"
	"fmt"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/inspect"
)

// A MySQL cluster has two disruption budgets: one that refuses the eviction of the primary while it
// is ready, so that a drain waits for the switchover from its node, and one that lets the other
// members go one at a time. Its members prefer nodes apart. A single server has no budget, which
// would only delay a drain.
func TestDisruptionBudgetsAndSpread(t *testing.T) {
	cluster := createMySQL(t, newNamespace(t), func(m *appsv1alpha1.MySQL) { m.Spec.Members = 3 })
	await.Eventually(t, timeout, func(ctx context.Context) error {
		primary := &policyv1.PodDisruptionBudget{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.PrimaryBudgetName()}, primary); err != nil {
			return err
		}
		if err := budgetIs(primary, cluster, metav1.LabelSelectorOpIn); err != nil {
			return err
		}
		others := &policyv1.PodDisruptionBudget{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Name}, others); err != nil {
			return err
		}
		return budgetIs(others, cluster, metav1.LabelSelectorOpNotIn)
	})
	c := childrenExist(t, cluster.Namespace, true)
	if err := inspect.SpreadProblem(c.sts.Spec.Template.Spec.Affinity, cluster.SelectorLabels()); err != nil {
		t.Error(err)
	}

	single := createMySQL(t, newNamespace(t), nil)
	childrenExist(t, single.Namespace, true)
	budgets := &policyv1.PodDisruptionBudgetList{}
	if err := k8s.List(context.Background(), budgets, client.InNamespace(single.Namespace)); err != nil {
		t.Fatal(err)
	}
	if len(budgets.Items) > 0 {
		t.Errorf("a single server has %d disruption budgets", len(budgets.Items))
	}
}

// budgetIs checks that budget keeps one ready member of the cluster m among those whose role label
// is (In) or is not (NotIn) the primary's, and lets an unready one go.
func budgetIs(budget *policyv1.PodDisruptionBudget, m *appsv1alpha1.MySQL, role metav1.LabelSelectorOperator) error {
	if ref := metav1.GetControllerOf(budget); ref == nil || ref.UID != m.UID {
		return fmt.Errorf("budget %s is controlled by %v", budget.Name, ref)
	}
	selector, err := metav1.LabelSelectorAsSelector(budget.Spec.Selector)
	if err != nil {
		return err
	}
	want, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: m.SelectorLabels(), MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: appsv1alpha1.LabelRole, Operator: role, Values: []string{appsv1alpha1.RoleLabelPrimary}}}})
	if err != nil {
		return err
	}
	for _, label := range []string{appsv1alpha1.RoleLabelPrimary, appsv1alpha1.RoleLabelReplica, ""} {
		member := labels.Set(m.SelectorLabels())
		if label != "" {
			member = labels.Merge(member, labels.Set{appsv1alpha1.LabelRole: label})
		}
		if selector.Matches(member) != want.Matches(member) {
			return fmt.Errorf("budget %s selects %s, want %s", budget.Name, selector, want)
		}
	}
	if one := intstr.FromInt32(1); budget.Spec.MinAvailable == nil || *budget.Spec.MinAvailable != one || budget.Spec.MaxUnavailable != nil {
		return fmt.Errorf("budget %s: minAvailable %v, maxUnavailable %v; want minAvailable 1", budget.Name, budget.Spec.MinAvailable, budget.Spec.MaxUnavailable)
	}
	if p := budget.Spec.UnhealthyPodEvictionPolicy; p == nil || *p != policyv1.AlwaysAllow {
		return fmt.Errorf("budget %s: unhealthy pod eviction policy %v, want AlwaysAllow", budget.Name, p)
	}
	return nil
}
