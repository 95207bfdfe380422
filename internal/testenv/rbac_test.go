package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/internal/testutil"
)

var k8s client.Client

func TestMain(m *testing.M) {
	os.Exit(RunWithOperator(m, &k8s))
}

const timeout = 20 * time.Second

func clientFor(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: got %v, want Forbidden", what, err)
	}
}

// TestOperatorHoldsOnlyTheShippedRBAC proves that the manager of every controller test runs as the
// shipped ServiceAccount and that the API server holds it to the shipped roles: what the roles
// grant works, what they do not is refused.
func TestOperatorHoldsOnlyTheShippedRBAC(t *testing.T) {
	ctx := context.Background()
	operatorClient := clientFor(t, operatorConfig)

	review := &authenticationv1.SelfSubjectReview{}
	if err := operatorClient.Create(ctx, review); err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != "system:serviceaccount:appkeeper-system:appkeeper-manager" {
		t.Fatalf("the operator acts as %q, want its ServiceAccount", got)
	}

	ns := testutil.NewNamespace(t, k8s, "rbac")
	if err := operatorClient.List(ctx, &appsv1alpha1.WebServerList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("list WebServers, which the role grants: %v", err)
	}
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To[int32](1)},
	}
	if err := k8s.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
	})

	// Owner references delete children: the operator never deletes a Deployment itself.
	wantForbidden(t, "delete the WebServer's Deployment",
		operatorClient.Delete(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}))
	// It writes status, never a user's spec.
	ws.Spec.Replicas = ptr.To[int32](2)
	wantForbidden(t, "update the WebServer's spec", operatorClient.Update(ctx, ws))
	// It cannot grant itself more.
	wantForbidden(t, "create a RoleBinding", operatorClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "escalate", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "appkeeper-manager", Namespace: "appkeeper-system"}},
	}))
	wantForbidden(t, "list Namespaces", operatorClient.List(ctx, &corev1.NamespaceList{}))
}
// userFacingRules is what the built-in role name (view, edit, admin) holds once the cluster's
// clusterrole-aggregation controller has folded into it every ClusterRole its aggregation rule
// selects. envtest runs no kube-controller-manager, so tests compute it themselves from the roles
// installed on the API server.
func userFacingRules(ctx context.Context, admin client.Client, name string) ([]rbacv1.PolicyRule, error) {
	role := &rbacv1.ClusterRole{}
	if err := admin.Get(ctx, client.ObjectKey{Name: name}, role); err != nil {
		return nil, err
	}
	if role.AggregationRule == nil {
		return role.Rules, nil
	}
	var rules []rbacv1.PolicyRule
	for _, selector := range role.AggregationRule.ClusterRoleSelectors {
		matching := &rbacv1.ClusterRoleList{}
		if err := admin.List(ctx, matching, client.MatchingLabels(selector.MatchLabels)); err != nil {
			return nil, err
		}
		for _, r := range matching.Items {
			rules = append(rules, r.Rules...)
		}
	}
	return rules, nil
}
