package installer

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/appkeeper/appkeeper/internal/dashboards"
)

func configMaps(objects map[string]*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for k, obj := range objects {
		if obj.GetKind() == "ConfigMap" {
			out[k] = obj
		}
	}
	return out
}

// checkDashboards holds the ConfigMaps to the dashboards: one each in namespace, with its JSON as
// generated, labelled label=value.
func checkDashboards(t *testing.T, where string, objects map[string]*unstructured.Unstructured, namespace, label, value string) {
	t.Helper()
	all, err := dashboards.All()
	if err != nil {
		t.Fatal(err)
	}
	found := configMaps(objects)
	if len(found) != len(all) {
		t.Errorf("%s: ConfigMaps %v, want one a dashboard (%d)", where, keys(found), len(all))
	}
	for _, d := range all {
		cm := found["ConfigMap/"+namespace+"/"+d.ConfigMapName()]
		if cm == nil {
			t.Errorf("%s: no ConfigMap %s/%s in %v", where, namespace, d.ConfigMapName(), keys(found))
			continue
		}
		if got := cm.GetLabels()[label]; got != value {
			t.Errorf("%s: %s label %s=%q, want %q", where, key(cm), label, got, value)
		}
		data := stringMap(t, cm, "data")
		if data[d.FileName()] != string(d.JSON) {
			t.Errorf("%s: %s does not hold %s as generated (keys %v)", where, key(cm), d.FileName(), slices.Collect(maps.Keys(data)))
		}
	}
}

// The chart ships the dashboards only when asked, where and with the label Grafana's sidecar
// looks for.
func TestChartDashboards(t *testing.T) {
	if cms := configMaps(rendered(t, nil)); len(cms) != 0 {
		t.Errorf("default values render dashboards %v, want none", keys(cms))
	}
	enabled := rendered(t, map[string]any{"grafanaDashboards": map[string]any{"enabled": true}})
	checkDashboards(t, "enabled", enabled, namespace, "grafana_dashboard", "1")
	for _, cm := range configMaps(enabled) {
		if folder := cm.GetAnnotations()["grafana_folder"]; folder != "appkeeper" {
			t.Errorf("%s: grafana_folder %q, want appkeeper", key(cm), folder)
		}
	}

	custom := rendered(t, map[string]any{"grafanaDashboards": map[string]any{
		"enabled": true, "namespace": "monitoring", "label": "example.com/dashboard", "labelValue": 1,
		"annotations": map[string]any{"grafana_folder": "Databases", "example.com/revision": 3},
	}})
	checkDashboards(t, "custom", custom, "monitoring", "example.com/dashboard", "1")
	for _, cm := range configMaps(custom) {
		if a := cm.GetAnnotations(); a["grafana_folder"] != "Databases" || a["example.com/revision"] != "3" {
			t.Errorf("%s: annotations %v", key(cm), a)
		}
	}

	for _, values := range []map[string]any{
		{"enabled": true, "folder": "appkeeper"},
		{"enabled": true, "namespace": "Monitoring"},
		{"enabled": true, "label": "not a label"},
	} {
		if _, err := RenderChart(chartDir, namespace, map[string]any{"grafanaDashboards": values}); err == nil {
			t.Errorf("grafanaDashboards %v rendered, want the schema to refuse it", values)
		}
	}
}

// kubectl apply -k config/grafana creates the same ConfigMaps as the chart.
func TestKustomizeDashboards(t *testing.T) {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "../../config/grafana")
	if err != nil {
		t.Fatal(err)
	}
	data, err := resources.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objects, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	checkDashboards(t, "config/grafana", byKey(t, objects), namespace, "grafana_dashboard", "1")
}
