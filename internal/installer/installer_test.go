package installer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/distribution/reference"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/appkeeper/appkeeper/internal/backup"
)

const (
	configDir = "../../config/default"
	chartDir  = "../../charts/appkeeper"
	namespace = "appkeeper-system"
)

func TestSplitImage(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0a", 32)
	for _, tc := range []struct{ image, name, tag, digest string }{
		{"appkeeper", "appkeeper", "", ""},
		{"ghcr.io/appkeeper/appkeeper:v0.1.0", "ghcr.io/appkeeper/appkeeper", "v0.1.0", ""},
		{"localhost:5000/appkeeper", "localhost:5000/appkeeper", "", ""},
		{"localhost:5000/appkeeper:dev@" + digest, "localhost:5000/appkeeper", "dev", digest},
		{"appkeeper@" + digest, "appkeeper", "", digest},
	} {
		name, tag, digest, err := splitImage(tc.image)
		if err != nil || name != tc.name || tag != tc.tag || digest != tc.digest {
			t.Errorf("splitImage(%q) = %q, %q, %q, %v; want %q, %q, %q", tc.image, name, tag, digest, err, tc.name, tc.tag, tc.digest)
		}
	}
}

func TestBuildRefusesAnImageThatIsNoReference(t *testing.T) {
	for _, image := range []string{"", "Appkeeper:v1", "appkeeper:v1:v2", "appkeeper@sha256:0a"} {
		if _, err := Build(configDir, image); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("image %q", image)) {
			t.Errorf("Build(%q) = %v, want an error naming the image", image, err)
		}
	}
}

// kustomized returns the objects of dist/install.yaml, keyed by kind/namespace/name.
func kustomized(t *testing.T, image string) map[string]*unstructured.Unstructured {
	t.Helper()
	data, err := Build(configDir, image)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return byKey(t, objects)
}

// rendered returns the chart's objects as `helm install --namespace appkeeper-system` renders them.
func rendered(t *testing.T, values map[string]any) map[string]*unstructured.Unstructured {
	t.Helper()
	objects, err := RenderChart(chartDir, namespace, values)
	if err != nil {
		t.Fatal(err)
	}
	return byKey(t, objects)
}

func key(obj *unstructured.Unstructured) string {
	return fmt.Sprintf("%s/%s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

func byKey(t *testing.T, objects []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	m := map[string]*unstructured.Unstructured{}
	for _, obj := range objects {
		if _, dup := m[key(obj)]; dup {
			t.Fatalf("%s appears twice", key(obj))
		}
		m[key(obj)] = obj
	}
	return m
}

func keys(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func field(t *testing.T, obj *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !found {
		t.Fatalf("%s: no %s (%v)", key(obj), strings.Join(path, "."), err)
	}
	return v
}

func container(t *testing.T, deployment *unstructured.Unstructured) map[string]any {
	t.Helper()
	containers := field(t, deployment, "spec", "template", "spec", "containers").([]any)
	if len(containers) != 1 {
		t.Fatalf("%s has %d containers, want 1", key(deployment), len(containers))
	}
	return containers[0].(map[string]any)
}

func TestInstallManifest(t *testing.T) {
	objects := kustomized(t, "ghcr.io/appkeeper/appkeeper:v0.1.0")
	for _, want := range []string{
		"Namespace//appkeeper-system",
		"CustomResourceDefinition//memcacheds.apps.appkeeper.dev",
		"CustomResourceDefinition//mysqls.apps.appkeeper.dev",
		"CustomResourceDefinition//mysqlbackups.apps.appkeeper.dev",
		"CustomResourceDefinition//podsets.apps.appkeeper.dev",
		"CustomResourceDefinition//webservers.apps.appkeeper.dev",
		"CustomResourceDefinition//wordpresses.apps.appkeeper.dev",
		"ServiceAccount/appkeeper-system/appkeeper-manager",
		"ClusterRole//appkeeper-manager",
		"ClusterRoleBinding//appkeeper-manager",
		"Role/appkeeper-system/appkeeper-manager",
		"RoleBinding/appkeeper-system/appkeeper-manager",
		"Deployment/appkeeper-system/appkeeper-manager",
		"Service/appkeeper-system/appkeeper-metrics",
	} {
		if objects[want] == nil {
			t.Errorf("dist/install.yaml lacks %s; it has %v", want, keys(objects))
		}
	}
	deployment := objects["Deployment/appkeeper-system/appkeeper-manager"]
	if deployment == nil {
		t.FailNow()
	}
	c := container(t, deployment)
	if c["image"] != "ghcr.io/appkeeper/appkeeper:v0.1.0" {
		t.Errorf("image %v, want the one given", c["image"])
	}
	if env := fmt.Sprint(c["env"]); env != "[map[name:"+backup.EnvImage+" value:ghcr.io/appkeeper/appkeeper:v0.1.0]]" {
		t.Errorf("env %s, want %s naming the image, for the backup Jobs", env, backup.EnvImage)
	}
	args := fmt.Sprint(c["args"])
	for _, want := range []string{"--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %s lack %s", args, want)
		}
	}
	pod := field(t, deployment, "spec", "template", "spec", "securityContext").(map[string]any)
	if pod["runAsNonRoot"] != true || fmt.Sprint(pod["seccompProfile"]) != "map[type:RuntimeDefault]" {
		t.Errorf("pod securityContext %v is not restricted", pod)
	}
	sc := c["securityContext"].(map[string]any)
	if sc["allowPrivilegeEscalation"] != false || sc["readOnlyRootFilesystem"] != true || fmt.Sprint(sc["capabilities"]) != "map[drop:[ALL]]" {
		t.Errorf("container securityContext %v is not restricted with a read-only root", sc)
	}
}

// TestRBACLeastPrivilege holds the generated roles to named verbs on named resources.
func TestRBACLeastPrivilege(t *testing.T) {
	for k, obj := range kustomized(t, "appkeeper") {
		if obj.GetKind() != "ClusterRole" && obj.GetKind() != "Role" {
			continue
		}
		for _, rule := range field(t, obj, "rules").([]any) {
			for _, list := range []string{"apiGroups", "resources", "verbs", "nonResourceURLs"} {
				values, _ := rule.(map[string]any)[list].([]any)
				if slices.Contains(values, any("*")) {
					t.Errorf("%s grants %s *", k, list)
				}
			}
		}
	}
}

// TestChartMatchesKustomize renders the Helm chart with its default values, as
// `helm install --create-namespace` does for a namespace that does not exist yet, and holds it to
// dist/install.yaml: the same objects, the namespace with the same labels (the pod security
// standard it enforces), the same CRDs, the same RBAC and the same manager. The namespace and the
// CRDs are kept on uninstall.
func TestChartMatchesKustomize(t *testing.T) {
	// The chart's image tag defaults to its appVersion.
	want := kustomized(t, "ghcr.io/appkeeper/appkeeper:"+chartAppVersion(t))
	got := rendered(t, nil)
	if !slices.Equal(keys(got), keys(want)) {
		t.Fatalf("chart objects\n%v\nwant those of config/default\n%v", keys(got), keys(want))
	}
	for k, w := range want {
		g := got[k]
		var paths [][]string
		switch w.GetKind() {
		case "Namespace":
			for label, value := range w.GetLabels() {
				if g.GetLabels()[label] != value {
					t.Errorf("%s: label %s=%q, want %q", k, label, g.GetLabels()[label], value)
				}
			}
			if g.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
				t.Errorf("%s: the chart must keep its namespace, which holds the release, on uninstall", k)
			}
		case "CustomResourceDefinition":
			paths = [][]string{{"spec"}}
			if g.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
				t.Errorf("%s: the chart must keep CRDs on uninstall", k)
			}
		case "ClusterRole", "Role":
			paths = [][]string{{"rules"}}
		case "ClusterRoleBinding", "RoleBinding":
			paths = [][]string{{"roleRef"}, {"subjects"}}
		case "Service":
			paths = [][]string{{"spec"}}
		case "Deployment":
			paths = [][]string{{"spec", "replicas"}, {"spec", "selector"}, {"spec", "template", "metadata"}}
			wantPod := field(t, w, "spec", "template", "spec").(map[string]any)
			gotPod := field(t, g, "spec", "template", "spec").(map[string]any)
			for _, f := range []string{"serviceAccountName", "automountServiceAccountToken", "securityContext", "terminationGracePeriodSeconds"} {
				if !reflect.DeepEqual(gotPod[f], wantPod[f]) {
					t.Errorf("%s: pod %s\n%v\nwant\n%v", k, f, gotPod[f], wantPod[f])
				}
			}
			wc, gc := container(t, w), container(t, g)
			wc["args"] = append(wc["args"].([]any), "--zap-log-level=info")
			for f := range wc {
				if !reflect.DeepEqual(gc[f], wc[f]) {
					t.Errorf("%s: container %s\n%v\nwant\n%v", k, f, gc[f], wc[f])
				}
			}
		}
		for _, path := range paths {
			if gv, wv := field(t, g, path...), field(t, w, path...); !reflect.DeepEqual(gv, wv) {
				t.Errorf("%s: %s differs from config/default", k, strings.Join(path, "."))
			}
		}
	}
}

func TestChartValues(t *testing.T) {
	got := rendered(t, map[string]any{
		"image":           map[string]any{"repository": "registry.example/appkeeper", "tag": "v1.2.3"},
		"replicas":        2,
		"watchNamespaces": []any{"shop", "blog"},
		"logLevel":        "debug",
		"resources":       map[string]any{"limits": map[string]any{"memory": "1Gi"}},
	})
	deployment := got["Deployment/appkeeper-system/appkeeper-manager"]
	if deployment == nil {
		t.Fatalf("no manager Deployment in %v", keys(got))
	}
	if r := field(t, deployment, "spec", "replicas"); fmt.Sprint(r) != "2" {
		t.Errorf("replicas %v, want 2", r)
	}
	c := container(t, deployment)
	if c["image"] != "registry.example/appkeeper:v1.2.3" {
		t.Errorf("image %v", c["image"])
	}
	if env := fmt.Sprint(c["env"]); !strings.Contains(env, "value:registry.example/appkeeper:v1.2.3") {
		t.Errorf("env %s, want %s naming the image", env, backup.EnvImage)
	}
	args := fmt.Sprint(c["args"])
	for _, want := range []string{"--namespaces=shop,blog", "--zap-log-level=debug"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %s lack %s", args, want)
		}
	}
	if limits := fmt.Sprint(c["resources"]); !strings.Contains(limits, "memory:1Gi") {
		t.Errorf("resources %s, want the memory limit given", limits)
	}
}

// TestChartLint runs `helm lint`'s checks; warnings fail too.
func TestChartLint(t *testing.T) {
	result := lint.RunAll(chartDir, nil, namespace)
	for _, m := range result.Messages {
		if m.Severity >= support.WarningSev {
			t.Error(m.Error())
		} else {
			t.Log(m.Error())
		}
	}
}

func chartAppVersion(t *testing.T) string {
	t.Helper()
	chart, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return chart.Metadata.AppVersion
}

// Values the chart cannot use are refused before anything is rendered, naming the value.
func TestChartValuesSchema(t *testing.T) {
	for _, tt := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"logLevel": "bogus"}, "logLevel"},
		{map[string]any{"replicas": -1}, "replicas"},
		{map[string]any{"replica": 2}, "replica"},
		{map[string]any{"watchNamespaces": []any{"Shop"}}, "watchNamespaces"},
		{map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
		{map[string]any{"image": map[string]any{"tag": "has space"}}, "tag"},
		{map[string]any{"priorityClassName": 5}, "priorityClassName"},
		{map[string]any{"extraArgs": "--leader-elect=false"}, "extraArgs"},
		{map[string]any{"extraEnv": []any{map[string]any{"name": "TZ", "valeu": "UTC"}}}, "valeu"},
		{map[string]any{"extraEnv": []any{map[string]any{"value": "UTC"}}}, "name"},
		{map[string]any{"imagePullSecrets": []any{"registry-credentials"}}, "imagePullSecrets"},
		{map[string]any{"serviceAccount": map[string]any{"foo": true}}, "foo"},
		{map[string]any{"serviceAccount": map[string]any{"name": ""}}, "serviceAccount/name"},
		{map[string]any{"serviceAccount": map[string]any{"create": "no"}}, "serviceAccount/create"},
		{map[string]any{"crds": map[string]any{"keep": "yes"}}, "crds/keep"},
		{map[string]any{"crds": map[string]any{"install": true}}, "install"},
		{map[string]any{"podLabels": map[string]any{"app.kubernetes.io/name": "mine"}}, "podLabels/app.kubernetes.io~1name"},
		{map[string]any{"podLabels": map[string]any{"team": "has space"}}, "podLabels/team"},
		{map[string]any{"podAnnotations": map[string]any{"replicas": map[string]any{}}}, "podAnnotations/replicas"},
		{map[string]any{"podSecurityContext": map[string]any{"runAsNonroot": true}}, "runAsNonroot"},
		{map[string]any{"podSecurityContext": map[string]any{"runAsUser": -1}}, "runAsUser"},
		{map[string]any{"containerSecurityContext": map[string]any{"readOnlyRootFileSystem": true}}, "readOnlyRootFileSystem"},
		{map[string]any{"serviceMonitor": map[string]any{"enabled": "true"}}, "serviceMonitor/enabled"},
		{map[string]any{"serviceMonitor": map[string]any{"interval": "soon"}}, "serviceMonitor/interval"},
		{map[string]any{"serviceMonitor": map[string]any{"tlsConfig": map[string]any{}}}, "tlsConfig"},
		{map[string]any{"podMonitor": map[string]any{"enabled": true}}, "podMonitor"},
		{map[string]any{"metricsCertificate": map[string]any{"secretName": "Metrics_TLS"}}, "metricsCertificate/secretName"},
		{map[string]any{"metricsCertificate": map[string]any{"secret": "metrics-tls"}}, "secret"},
		{map[string]any{"image": map[string]any{"repository": "registry:5000/Team/appkeeper"}}, "repository"},
		{map[string]any{"image": map[string]any{"repository": "appkeeper:v1"}}, "repository"},
	} {
		_, err := RenderChart(chartDir, namespace, tt.values)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("values %v: error %v, want one naming %s", tt.values, err, tt.want)
		}
	}
	for _, values := range []map[string]any{{"logLevel": 3}, {"logLevel": "debug"}, {"replicas": 0},
		{"image": map[string]any{"repository": "[fd00::1]:5000/team/appkeeper", "tag": "v1.2.3-rc.1"}}} {
		if _, err := RenderChart(chartDir, namespace, values); err != nil {
			t.Errorf("values %v: %v", values, err)
		}
	}
}

// The chart's image values are the parts of an image reference: the same grammar as the library
// that splits the installer's image, so that what the schema admits the kubelet can pull.
func TestChartImageSchemaIsTheReferenceGrammar(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Image struct {
				Properties struct {
					Repository, Tag struct{ Pattern string }
				}
			}
		}
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	image := schema.Properties.Image.Properties
	if want := "^" + reference.NameRegexp.String() + "$"; image.Repository.Pattern != want {
		t.Errorf("image.repository pattern = %s, want %s", image.Repository.Pattern, want)
	}
	if want := "^(" + reference.TagRegexp.String() + ")?$"; image.Tag.Pattern != want {
		t.Errorf("image.tag pattern = %s, want %s", image.Tag.Pattern, want)
	}
}
