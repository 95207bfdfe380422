package installer

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	rulesSource = "../../config/prometheus/rules/alerts.yaml"
	ruleKey     = "PrometheusRule/appkeeper-system/appkeeper-alerts"
)

// sourceGroups returns the rule groups of config/prometheus/rules/alerts.yaml.
func sourceGroups(t *testing.T) []any {
	t.Helper()
	data, err := os.ReadFile(rulesSource)
	if err != nil {
		t.Fatal(err)
	}
	var source map[string]any
	if err := yaml.Unmarshal(data, &source); err != nil {
		t.Fatal(err)
	}
	return source["groups"].([]any)
}

// forEachAlert calls check with every alerting rule of groups.
func forEachAlert(groups []any, check func(rule map[string]any)) {
	for _, group := range groups {
		for _, rule := range group.(map[string]any)["rules"].([]any) {
			if rule := rule.(map[string]any); rule["alert"] != nil {
				check(rule)
			}
		}
	}
}

// TestChartPrometheusRule: the chart's PrometheusRule holds the rules of alerts.yaml as promtool
// tests them, Prometheus's templates intact; its values set labels, for: and the runbooks' URL.
func TestChartPrometheusRule(t *testing.T) {
	if rendered(t, nil)[ruleKey] != nil {
		t.Error("a PrometheusRule is rendered by default")
	}

	rule := rendered(t, map[string]any{"prometheusRule": map[string]any{"enabled": true}})[ruleKey]
	if rule == nil {
		t.Fatal("no PrometheusRule with prometheusRule.enabled")
	}
	same(t, "apiVersion", rule.GetAPIVersion(), "monitoring.coreos.com/v1")
	if groups := field(t, rule, "spec", "groups"); !reflect.DeepEqual(groups, sourceGroups(t)) {
		t.Errorf("the chart's rule groups differ from %s:\n%v", rulesSource, groups)
	}

	rule = rendered(t, map[string]any{"prometheusRule": map[string]any{
		"enabled":        true,
		"labels":         map[string]any{"release": "prometheus", "shard": 1},
		"runbookBaseURL": "https://wiki.example.com/appkeeper/",
		"for":            map[string]any{"AppkeeperInstanceDegraded": "30s"},
		"operatorJob":    "monitoring/appkeeper",
	}})[ruleKey]
	labels := stringMap(t, rule, "metadata", "labels")
	if labels["release"] != "prometheus" || labels["shard"] != "1" || labels["app.kubernetes.io/name"] != "appkeeper" {
		t.Errorf("PrometheusRule labels %v", labels)
	}
	var source, got []map[string]any
	forEachAlert(sourceGroups(t), func(r map[string]any) { source = append(source, r) })
	forEachAlert(field(t, rule, "spec", "groups").([]any), func(r map[string]any) { got = append(got, r) })
	if len(got) != len(source) {
		t.Fatalf("%d alerting rules, want %d", len(got), len(source))
	}
	for i, r := range got {
		alert := r["alert"].(string)
		wantFor := source[i]["for"]
		if alert == "AppkeeperInstanceDegraded" {
			wantFor = "30s"
		}
		same(t, alert+" for", r["for"], wantFor)
		annotations := r["annotations"].(map[string]any)
		same(t, alert+" runbook_url", annotations["runbook_url"], "https://wiki.example.com/appkeeper/"+alert+".md")
		onJob := strings.NewReplacer(`job="appkeeper-metrics"`, `job="monitoring/appkeeper"`, "(job appkeeper-metrics)", "(job monitoring/appkeeper)")
		same(t, alert+" description", annotations["description"], onJob.Replace(source[i]["annotations"].(map[string]any)["description"].(string)))
		same(t, alert+" expr", r["expr"], onJob.Replace(source[i]["expr"].(string)))
	}
}

// A for: of an alert that has none, or that is no duration, is refused.
func TestChartPrometheusRuleSchema(t *testing.T) {
	for _, tt := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"for": map[string]any{"AppkeeperRolloutRolledBack": "5m"}}, "AppkeeperRolloutRolledBack"},
		{map[string]any{"for": map[string]any{"AppkeeperInstanceDegraded": "soon"}}, "AppkeeperInstanceDegraded"},
		{map[string]any{"for": map[string]any{"AppkeeperInstanceDegraded": ""}}, "AppkeeperInstanceDegraded"},
		{map[string]any{"runbookBaseURL": "docs/runbooks"}, "runbookBaseURL"},
		{map[string]any{"ruleSelector": map[string]any{}}, "ruleSelector"},
		{map[string]any{"operatorJob": ""}, "operatorJob"},
	} {
		tt.values["enabled"] = true
		if _, err := RenderChart(chartDir, namespace, map[string]any{"prometheusRule": tt.values}); err == nil ||
			!strings.Contains(err.Error(), tt.want) {
			t.Errorf("prometheusRule %v: error %v, want one naming %s", tt.values, err, tt.want)
		}
	}
}
