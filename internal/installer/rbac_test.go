package installer

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var kindPlurals = map[string]string{
	"webserver": "webservers", "memcached": "memcacheds", "podset": "podsets", "mysql": "mysqls", "wordpress": "wordpresses",
}

const aggregateTo = "rbac.authorization.k8s.io/aggregate-to-"

// verbsOn returns the verbs role grants on resource of apps.appkeeper.dev.
func verbsOn(t *testing.T, role *unstructured.Unstructured, resource string) []string {
	t.Helper()
	var verbs []string
	for _, r := range field(t, role, "rules").([]any) {
		rule := r.(map[string]any)
		if slices.Contains(rule["apiGroups"].([]any), any("apps.appkeeper.dev")) && slices.Contains(rule["resources"].([]any), any(resource)) {
			for _, v := range rule["verbs"].([]any) {
				verbs = append(verbs, v.(string))
			}
		}
	}
	slices.Sort(verbs)
	return verbs
}

// checkUserRoles holds the editor and viewer roles of every kind to their verbs and aggregation:
// everything aggregates except the PodSet editor, which would let anyone with edit run any pod
// through the operator's identity.
func checkUserRoles(t *testing.T, where string, objects map[string]*unstructured.Unstructured) {
	t.Helper()
	for kind, plural := range kindPlurals {
		editor, viewer := objects["ClusterRole//appkeeper-"+kind+"-editor"], objects["ClusterRole//appkeeper-"+kind+"-viewer"]
		if editor == nil || viewer == nil {
			t.Errorf("%s lacks the editor or viewer role of %s", where, kind)
			continue
		}
		if got := fmt.Sprint(verbsOn(t, editor, plural)); got != "[create delete deletecollection get list patch update watch]" {
			t.Errorf("%s: %s editor verbs on %s = %s", where, kind, plural, got)
		}
		if got := fmt.Sprint(verbsOn(t, editor, plural+"/status")); got != "[get]" {
			t.Errorf("%s: %s editor verbs on %s/status = %s", where, kind, plural, got)
		}
		for _, resource := range []string{plural, plural + "/status"} {
			if got := fmt.Sprint(verbsOn(t, viewer, resource)); got != "[get list watch]" {
				t.Errorf("%s: %s viewer verbs on %s = %s", where, kind, resource, got)
			}
		}
		wantEditorAggregated := kind != "podset"
		for _, builtin := range []string{"edit", "admin"} {
			if got := editor.GetLabels()[aggregateTo+builtin] == "true"; got != wantEditorAggregated {
				t.Errorf("%s: %s editor aggregated to %s: %v, want %v", where, kind, builtin, got, wantEditorAggregated)
			}
		}
		if editor.GetLabels()[aggregateTo+"view"] != "" {
			t.Errorf("%s: %s editor aggregates to view", where, kind)
		}
		if viewer.GetLabels()[aggregateTo+"view"] != "true" {
			t.Errorf("%s: %s viewer does not aggregate to view: %v", where, kind, viewer.GetLabels())
		}
	}
}

func TestUserRoles(t *testing.T) {
	checkUserRoles(t, "dist/install.yaml", kustomized(t, "appkeeper"))
	checkUserRoles(t, "the chart", rendered(t, nil))
}

// TestChartWatchNamespacesRBAC: with watchNamespaces, the operator's rights on namespaced
// resources are a Role in each watched namespace, and the ClusterRole keeps only the reviews of
// the metrics endpoint, the nodes (read only: a MySQL cluster leaves a cordoned node) and the API
// server's readiness.
func TestChartWatchNamespacesRBAC(t *testing.T) {
	all := rendered(t, nil)["ClusterRole//appkeeper-manager"]
	got := rendered(t, map[string]any{"watchNamespaces": []any{"shop", "blog"}})

	cluster := got["ClusterRole//appkeeper-manager"]
	if cluster == nil {
		t.Fatalf("no ClusterRole appkeeper-manager in %v", keys(got))
	}
	const clusterRules = 4
	for _, r := range field(t, cluster, "rules").([]any) {
		groups := fmt.Sprint(r.(map[string]any)["apiGroups"])
		urls := fmt.Sprint(r.(map[string]any)["nonResourceURLs"])
		resources, verbs := fmt.Sprint(r.(map[string]any)["resources"]), fmt.Sprint(r.(map[string]any)["verbs"])
		nodes := groups == "[]" && resources == "[nodes]" && verbs == "[get list watch]"
		if groups != "[authentication.k8s.io]" && groups != "[authorization.k8s.io]" && urls != "[/readyz]" && !nodes {
			t.Errorf("the ClusterRole grants %v cluster-wide", r)
		}
	}
	if n := len(field(t, cluster, "rules").([]any)); n != clusterRules {
		t.Errorf("the ClusterRole has %d rules, want tokenreviews, subjectaccessreviews, nodes and /readyz", n)
	}
	if got["ClusterRoleBinding//appkeeper-manager"] == nil {
		t.Error("the small ClusterRole is not bound")
	}
	allRules := field(t, all, "rules").([]any)
	for _, ns := range []string{"shop", "blog"} {
		role, binding := got["Role/"+ns+"/appkeeper-manager-watch"], got["RoleBinding/"+ns+"/appkeeper-manager-watch"]
		if role == nil || binding == nil {
			t.Fatalf("no Role and RoleBinding in %s: %v", ns, keys(got))
		}
		if n := len(field(t, role, "rules").([]any)); n != len(allRules)-clusterRules {
			t.Errorf("the Role in %s has %d rules, want the %d namespaced ones", ns, n, len(allRules)-clusterRules)
		}
		if verbs := verbsOn(t, role, "webservers"); fmt.Sprint(verbs) != "[get list watch]" {
			t.Errorf("the Role in %s grants %v on webservers", ns, verbs)
		}
		if ref := fmt.Sprint(field(t, binding, "roleRef", "name")); ref != "appkeeper-manager-watch" {
			t.Errorf("the RoleBinding in %s binds %s", ns, ref)
		}
		subjects := fmt.Sprint(field(t, binding, "subjects"))
		if subjects != "[map[kind:ServiceAccount name:appkeeper-manager namespace:appkeeper-system]]" {
			t.Errorf("the RoleBinding in %s binds %s", ns, subjects)
		}
	}
	if got["Role/"+namespace+"/appkeeper-manager"] == nil {
		t.Error("the leader election Role is gone")
	}
}
