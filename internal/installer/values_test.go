package installer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	managerKey = "Deployment/appkeeper-system/appkeeper-manager"
	monitorKey = "ServiceMonitor/appkeeper-system/appkeeper-metrics"
)

// podSpec returns the manager Deployment's pod spec among the chart's objects.
func podSpec(t *testing.T, objects map[string]*unstructured.Unstructured) map[string]any {
	t.Helper()
	deployment := objects[managerKey]
	if deployment == nil {
		t.Fatalf("no manager Deployment in %v", keys(objects))
	}
	return field(t, deployment, "spec", "template", "spec").(map[string]any)
}

// same fails unless got and want print alike: values come back from YAML as int64 or float64,
// []any and map[string]any, which the literals below need not spell out.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s\n%v\nwant\n%v", what, got, want)
	}
}

// stringMap returns the labels or annotations at path, which the API server takes only as strings.
func stringMap(t *testing.T, obj *unstructured.Unstructured, path ...string) map[string]string {
	t.Helper()
	m, found, err := unstructured.NestedStringMap(obj.Object, path...)
	if err != nil || !found {
		t.Fatalf("%s: %s is no map of strings (%v)", key(obj), strings.Join(path, "."), err)
	}
	return m
}

func subjects(t *testing.T, objects map[string]*unstructured.Unstructured, binding string) string {
	t.Helper()
	obj := objects[binding]
	if obj == nil {
		t.Fatalf("no %s in %v", binding, keys(objects))
	}
	return fmt.Sprint(field(t, obj, "subjects"))
}

func crds(objects map[string]*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objects {
		if obj.GetKind() == "CustomResourceDefinition" {
			out = append(out, obj)
		}
	}
	return out
}

// TestChartValuesRender: each value of the chart, set, shows in the objects a user would get.
func TestChartValuesRender(t *testing.T) {
	for _, tt := range []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, objects map[string]*unstructured.Unstructured)
	}{
		{"imagePullSecrets", map[string]any{"imagePullSecrets": []any{map[string]any{"name": "registry-credentials"}}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				same(t, "imagePullSecrets", podSpec(t, objects)["imagePullSecrets"], "[map[name:registry-credentials]]")
			}},
		{"podSecurityContext replaces the chart's", map[string]any{"podSecurityContext": map[string]any{"runAsUser": 1000, "fsGroup": 2000}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				same(t, "pod securityContext", podSpec(t, objects)["securityContext"], "map[fsGroup:2000 runAsUser:1000]")
			}},
		{"containerSecurityContext replaces the chart's", map[string]any{"containerSecurityContext": map[string]any{"readOnlyRootFilesystem": false}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				same(t, "container securityContext", container(t, objects[managerKey])["securityContext"], "map[readOnlyRootFilesystem:false]")
			}},
		{"priorityClassName", map[string]any{"priorityClassName": "system-cluster-critical"},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				same(t, "priorityClassName", podSpec(t, objects)["priorityClassName"], "system-cluster-critical")
			}},
		{"podLabels join the selector's", map[string]any{"podLabels": map[string]any{"team": "platform", "tier": 2}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				deployment := objects[managerKey]
				same(t, "pod labels", stringMap(t, deployment, "spec", "template", "metadata", "labels"),
					"map[app.kubernetes.io/component:manager app.kubernetes.io/name:appkeeper team:platform tier:2]")
				same(t, "selector", field(t, deployment, "spec", "selector", "matchLabels"),
					"map[app.kubernetes.io/component:manager app.kubernetes.io/name:appkeeper]")
			}},
		{"podAnnotations join the chart's, which stays", map[string]any{"podAnnotations": map[string]any{
			"prometheus.io/scrape": false, "kubectl.kubernetes.io/default-container": "other"}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				same(t, "pod annotations", stringMap(t, objects[managerKey], "spec", "template", "metadata", "annotations"),
					"map[kubectl.kubernetes.io/default-container:manager prometheus.io/scrape:false]")
			}},
		{"extraArgs come last", map[string]any{"extraArgs": []any{"--max-concurrent-reconciles=4", "--leader-elect=false"}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				args := container(t, objects[managerKey])["args"].([]any)
				same(t, "last args", args[len(args)-2:], "[--max-concurrent-reconciles=4 --leader-elect=false]")
			}},
		{"extraEnv follows the image's variable", map[string]any{"extraEnv": []any{
			map[string]any{"name": "GOMEMLIMIT", "valueFrom": map[string]any{"resourceFieldRef": map[string]any{"resource": "limits.memory"}}},
			map[string]any{"name": "TZ", "value": "UTC"}}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				same(t, "env", container(t, objects[managerKey])["env"],
					"[map[name:APPKEEPER_IMAGE value:ghcr.io/appkeeper/appkeeper:"+chartAppVersion(t)+"] "+
						"map[name:GOMEMLIMIT valueFrom:map[resourceFieldRef:map[resource:limits.memory]]] map[name:TZ value:UTC]]")
			}},
		{"serviceAccount named and annotated", map[string]any{
			"serviceAccount":  map[string]any{"name": "operator", "annotations": map[string]any{"iam.example/role": "appkeeper", "iam.example/ttl": 3600}},
			"watchNamespaces": []any{"shop"}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				sa := objects["ServiceAccount/appkeeper-system/operator"]
				if sa == nil {
					t.Fatalf("no ServiceAccount operator in %v", keys(objects))
				}
				same(t, "ServiceAccount annotations", stringMap(t, sa, "metadata", "annotations"), "map[iam.example/role:appkeeper iam.example/ttl:3600]")
				checkBoundServiceAccount(t, objects, "operator")
			}},
		{"serviceAccount.create=false binds the named one", map[string]any{
			"serviceAccount": map[string]any{"create": false, "name": "existing"}, "watchNamespaces": []any{"shop"}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				for k, obj := range objects {
					if obj.GetKind() == "ServiceAccount" {
						t.Errorf("the chart renders %s", k)
					}
				}
				checkBoundServiceAccount(t, objects, "existing")
			}},
		{"crds.create=false renders no CRD", map[string]any{"crds": map[string]any{"create": false}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				if n := len(crds(objects)); n != 0 {
					t.Errorf("%d CRDs rendered", n)
				}
				if objects[managerKey] == nil {
					t.Error("no manager Deployment")
				}
			}},
		{"crds.keep=false lets uninstall delete the CRDs", map[string]any{"crds": map[string]any{"keep": false}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				checkCRDs(t, objects, "")
			}},
		{"CRDs are kept by default", nil,
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				checkCRDs(t, objects, "keep")
				ns := objects["Namespace//"+namespace]
				if ns == nil {
					t.Fatalf("no Namespace in %v", keys(objects))
				}
				same(t, "Namespace annotations", stringMap(t, ns, "metadata", "annotations"),
					"map[argocd.argoproj.io/sync-options:"+argoCDOptions["keep"]+" helm.sh/resource-policy:keep]")
				if objects[monitorKey] != nil {
					t.Error("a ServiceMonitor is rendered by default")
				}
			}},
		{"serviceMonitor", map[string]any{"serviceMonitor": map[string]any{
			"enabled": true, "labels": map[string]any{"release": "prometheus", "shard": 1}, "interval": "30s"}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				monitor := checkServiceMonitor(t, objects)
				labels := stringMap(t, monitor, "metadata", "labels")
				if labels["release"] != "prometheus" || labels["shard"] != "1" || labels["app.kubernetes.io/name"] != "appkeeper" {
					t.Errorf("ServiceMonitor labels %v", labels)
				}
				same(t, "endpoints", field(t, monitor, "spec", "endpoints"), "[map[bearerTokenFile:/var/run/secrets/kubernetes.io/serviceaccount/token "+
					"honorLabels:true interval:30s path:/metrics port:https scheme:https tlsConfig:map[insecureSkipVerify:true]]]")
			}},
		{"serviceMonitor with a token from a Secret", map[string]any{"serviceMonitor": map[string]any{
			"enabled": true, "authorization": map[string]any{"credentials": map[string]any{"name": "scraper-token", "key": "token"}}}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				same(t, "endpoints", field(t, checkServiceMonitor(t, objects), "spec", "endpoints"), "[map[authorization:map[credentials:map[key:token name:scraper-token]] "+
					"honorLabels:true path:/metrics port:https scheme:https tlsConfig:map[insecureSkipVerify:true]]]")
			}},
		{"metricsCertificate is served and verified", map[string]any{"metricsCertificate": map[string]any{"secretName": "appkeeper-metrics-tls"},
			"serviceMonitor": map[string]any{"enabled": true}},
			func(t *testing.T, objects map[string]*unstructured.Unstructured) {
				c := container(t, objects[managerKey])
				if args := fmt.Sprint(c["args"]); !strings.Contains(args, "--metrics-cert-dir=/etc/appkeeper/metrics-certificate") {
					t.Errorf("args %s, want --metrics-cert-dir", args)
				}
				same(t, "volumeMounts", c["volumeMounts"], "[map[mountPath:/etc/appkeeper/metrics-certificate name:metrics-certificate readOnly:true]]")
				same(t, "volumes", podSpec(t, objects)["volumes"], "[map[name:metrics-certificate secret:map[secretName:appkeeper-metrics-tls]]]")
				same(t, "endpoints", field(t, checkServiceMonitor(t, objects), "spec", "endpoints"), "[map[bearerTokenFile:/var/run/secrets/kubernetes.io/serviceaccount/token "+
					"honorLabels:true path:/metrics port:https scheme:https tlsConfig:map[ca:map[secret:map[key:ca.crt name:appkeeper-metrics-tls]] "+
					"serverName:appkeeper-metrics.appkeeper-system.svc]]]")
			}},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, rendered(t, tt.values)) })
	}
}

// checkBoundServiceAccount: the manager runs as name, and every binding of the chart binds name.
func checkBoundServiceAccount(t *testing.T, objects map[string]*unstructured.Unstructured, name string) {
	t.Helper()
	same(t, "serviceAccountName", podSpec(t, objects)["serviceAccountName"], name)
	same(t, "automountServiceAccountToken", podSpec(t, objects)["automountServiceAccountToken"], true)
	want := fmt.Sprintf("[map[kind:ServiceAccount name:%s namespace:%s]]", name, namespace)
	for _, binding := range []string{
		"ClusterRoleBinding//appkeeper-manager",
		"RoleBinding/appkeeper-system/appkeeper-manager",
		"RoleBinding/shop/appkeeper-manager-watch",
	} {
		same(t, binding+" subjects", subjects(t, objects, binding), want)
	}
}

// argoCDOptions are the Argo CD sync options that make the same promise as each Helm resource
// policy: a kept object is neither deleted with the Application nor pruned.
var argoCDOptions = map[string]string{"keep": "Delete=false,Prune=false", "": ""}

// checkCRDs: every CRD is rendered, with the resource policy given ("" for none).
func checkCRDs(t *testing.T, objects map[string]*unstructured.Unstructured, policy string) {
	t.Helper()
	if n := len(crds(objects)); n != len(kindPlurals)+2 {
		t.Errorf("%d CRDs rendered, want every kind's and both backups'", n)
	}
	for _, crd := range crds(objects) {
		if got := crd.GetAnnotations()["helm.sh/resource-policy"]; got != policy {
			t.Errorf("%s: helm.sh/resource-policy %q, want %q", crd.GetName(), got, policy)
		}
		if got := crd.GetAnnotations()["argocd.argoproj.io/sync-options"]; got != argoCDOptions[policy] {
			t.Errorf("%s: argocd.argoproj.io/sync-options %q, want %q", crd.GetName(), got, argoCDOptions[policy])
		}
		if crd.GetAnnotations()["controller-gen.kubebuilder.io/version"] == "" {
			t.Errorf("%s lost controller-gen's annotation: %v", crd.GetName(), crd.GetAnnotations())
		}
	}
}

// checkServiceMonitor returns the ServiceMonitor, which must select the metrics Service.
func checkServiceMonitor(t *testing.T, objects map[string]*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	monitor, service := objects[monitorKey], objects["Service/appkeeper-system/appkeeper-metrics"]
	if monitor == nil || service == nil {
		t.Fatalf("no ServiceMonitor or metrics Service in %v", keys(objects))
	}
	same(t, "apiVersion", monitor.GetAPIVersion(), "monitoring.coreos.com/v1")
	selector := field(t, monitor, "spec", "selector", "matchLabels").(map[string]any)
	for k, v := range selector {
		if service.GetLabels()[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v; the metrics Service has %v", k, v, service.GetLabels())
		}
	}
	port := field(t, service, "spec", "ports").([]any)[0].(map[string]any)["name"]
	same(t, "the Service's port", port, field(t, monitor, "spec", "endpoints").([]any)[0].(map[string]any)["port"])
	return monitor
}

// TestChartSchemaFollowsKubernetesTypes holds the fields the schema lets through for Kubernetes
// objects to those of the Kubernetes API the module builds against, so that a new field is not
// refused and a removed one not let through.
func TestChartSchemaFollowsKubernetesTypes(t *testing.T) {
	schema := chartSchema(t)
	for path, typ := range map[string]reflect.Type{
		"podSecurityContext":       reflect.TypeFor[corev1.PodSecurityContext](),
		"containerSecurityContext": reflect.TypeFor[corev1.SecurityContext](),
		"extraEnv.items":           reflect.TypeFor[corev1.EnvVar](),
		"imagePullSecrets.items":   reflect.TypeFor[corev1.LocalObjectReference](),
	} {
		node := schema
		for _, name := range strings.Split(path, ".") {
			if name != "items" {
				node = node["properties"].(map[string]any)
			}
			node = node[name].(map[string]any)
		}
		if node["additionalProperties"] != false {
			t.Errorf("%s lets unknown fields through", path)
		}
		var got []string
		for name := range node["properties"].(map[string]any) {
			got = append(got, name)
		}
		slices.Sort(got)
		if want := jsonFields(typ); !slices.Equal(got, want) {
			t.Errorf("%s: the schema's fields\n%v\nwant those of %s\n%v", path, got, typ, want)
		}
	}
}

func jsonFields(typ reflect.Type) []string {
	var names []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func chartSchema(t *testing.T) map[string]any {
	t.Helper()
	chart, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(chart.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	return schema
}
