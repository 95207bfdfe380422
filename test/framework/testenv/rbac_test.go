package testenv

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

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

	ns := testcluster.NewNamespace(t, k8s, "rbac")
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
	await.Eventually(t, timeout, func(ctx context.Context) error {
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

	// Of the CRDs it lists and watches one, prometheus-operator's PodMonitor, by its name: the API
	// server authorizes a list or watch for the resource name a metadata.name field selector gives.
	crds := &metav1.PartialObjectMetadataList{}
	crds.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinitionList"})
	if err := operatorClient.List(ctx, crds, client.MatchingFields{"metadata.name": "podmonitors.monitoring.coreos.com"}); err != nil {
		t.Errorf("list the PodMonitor CRD by name, which the role grants: %v", err)
	}
	wantForbidden(t, "list every CRD", operatorClient.List(ctx, crds))
	wantForbidden(t, "list another CRD by name",
		operatorClient.List(ctx, crds, client.MatchingFields{"metadata.name": "webservers.apps.appkeeper.dev"}))
}

// userFacingRules is what the built-in role name (view, edit, admin) holds once the cluster's
// clusterrole-aggregation controller has folded into it every ClusterRole its aggregation rule
// selects, and theirs in turn (view aggregates to edit, edit to admin). envtest runs no
// kube-controller-manager, so tests compute it themselves from the roles on the API server.
func userFacingRules(ctx context.Context, admin client.Client, name string) ([]rbacv1.PolicyRule, error) {
	role := &rbacv1.ClusterRole{}
	if err := admin.Get(ctx, client.ObjectKey{Name: name}, role); err != nil {
		return nil, err
	}
	return aggregatedRules(ctx, admin, role, map[string]bool{})
}

func aggregatedRules(ctx context.Context, admin client.Client, role *rbacv1.ClusterRole, seen map[string]bool) ([]rbacv1.PolicyRule, error) {
	if seen[role.Name] {
		return nil, nil
	}
	seen[role.Name] = true
	if role.AggregationRule == nil {
		return role.Rules, nil
	}
	var rules []rbacv1.PolicyRule
	for _, selector := range role.AggregationRule.ClusterRoleSelectors {
		matching := &rbacv1.ClusterRoleList{}
		if err := admin.List(ctx, matching, client.MatchingLabels(selector.MatchLabels)); err != nil {
			return nil, err
		}
		for i := range matching.Items {
			more, err := aggregatedRules(ctx, admin, &matching.Items[i], seen)
			if err != nil {
				return nil, err
			}
			rules = append(rules, more...)
		}
	}
	return rules, nil
}

// actingAs gives user the rules the built-in role holds once aggregated, in namespace ns, and
// returns a client that impersonates user. The rules are copied into a ClusterRole of the test's
// own because envtest runs no clusterrole-aggregation controller to fill the built-in one.
func actingAs(t *testing.T, user, builtin, ns string) client.Client {
	t.Helper()
	ctx := context.Background()
	rules, err := userFacingRules(ctx, k8s, builtin)
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "aggregated-" + builtin + "-" + ns}, Rules: rules}
	if err := k8s.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), role) })
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	if err := k8s.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(operatorConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c := clientFor(t, cfg)
	// The authorizer sees new bindings through an informer.
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return c.List(ctx, &appsv1alpha1.WebServerList{}, client.InNamespace(ns))
	})
	return c
}

func webServerNamed(ns, name string) *appsv1alpha1.WebServer {
	return &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To[int32](1)},
	}
}

func podSetNamed(ns, name string) *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1alpha1.PodSetSpec{Template: appsv1alpha1.PodSetTemplate{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}},
		}}},
	}
}

// TestUserFacingRoles holds the shipped editor and viewer roles to what the built-in roles they
// aggregate to should let a person do: view reads, edit writes, and neither edit nor admin
// creates PodSets, which run arbitrary pods through the operator.
func TestUserFacingRoles(t *testing.T) {
	ctx := context.Background()
	ns := testcluster.NewNamespace(t, k8s, "roles")
	if err := k8s.Create(ctx, webServerNamed(ns, "existing")); err != nil {
		t.Fatal(err)
	}

	viewer := actingAs(t, "viewer", "view", ns)
	if err := viewer.Get(ctx, client.ObjectKey{Namespace: ns, Name: "existing"}, &appsv1alpha1.WebServer{}); err != nil {
		t.Errorf("view: get a WebServer: %v", err)
	}
	if err := viewer.List(ctx, &appsv1alpha1.PodSetList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("view: list PodSets: %v", err)
	}
	wantForbidden(t, "view: create a WebServer", viewer.Create(ctx, webServerNamed(ns, "by-viewer")))

	editor := actingAs(t, "editor", "edit", ns)
	if err := editor.Create(ctx, webServerNamed(ns, "by-editor")); err != nil {
		t.Errorf("edit: create a WebServer: %v", err)
	}
	for _, kind := range []client.Object{&appsv1alpha1.Memcached{}, &appsv1alpha1.MySQL{}, &appsv1alpha1.WordPress{}} {
		if err := editor.DeleteAllOf(ctx, kind, client.InNamespace(ns)); err != nil {
			t.Errorf("edit: delete every %T: %v", kind, err)
		}
	}
	if err := editor.List(ctx, &appsv1alpha1.PodSetList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("edit: list PodSets: %v", err)
	}
	wantForbidden(t, "edit: create a PodSet", editor.Create(ctx, podSetNamed(ns, "by-editor")))

	admin := actingAs(t, "admin", "admin", ns)
	wantForbidden(t, "admin: create a PodSet", admin.Create(ctx, podSetNamed(ns, "by-admin")))
}
