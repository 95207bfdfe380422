// Package prometheus holds appkeeper's alerts: rules/alerts.yaml, their promtool unit tests, and
// the PrometheusRule that "make sync-manifests" generates from them.
package prometheus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

const (
	rulesFile   = "rules/alerts.yaml"
	testsFile   = "rules/alerts_test.yaml"
	runbooksDir = "../../docs/runbooks"
	runbookBase = "https://github.com/appkeeper/appkeeper/blob/main/docs/runbooks/"
)

type alertingRule struct {
	Alert       string            `json:"alert"`
	For         string            `json:"for"`
	Annotations map[string]string `json:"annotations"`
}

// alertingRules returns the alerting rules of alerts.yaml, in order.
func alertingRules(t *testing.T) []alertingRule {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []alertingRule `json:"rules"`
		} `json:"groups"`
	}
	readYAML(t, rulesFile, &file)
	var rules []alertingRule
	for _, group := range file.Groups {
		for _, rule := range group.Rules {
			if rule.Alert != "" {
				rules = append(rules, rule)
			}
		}
	}
	if len(rules) == 0 {
		t.Fatalf("%s holds no alert", rulesFile)
	}
	return rules
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestRulesAreValid: Prometheus loads alerts.yaml, and promtool's linter has nothing to say.
func TestRulesAreValid(t *testing.T) {
	testcluster.Promtool(t, "check", "rules", "--lint=all", "--lint-fatal", rulesFile)
}

// TestRules runs the unit tests of alerts_test.yaml.
func TestRules(t *testing.T) {
	testcluster.Promtool(t, "test", "rules", testsFile)
}

// TestEveryAlertIsTested: each alert has a test case where it fires and one where it stays
// silent.
func TestEveryAlertIsTested(t *testing.T) {
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				AlertName string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	readYAML(t, testsFile, &tests)
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, test := range tests.Tests {
		for _, c := range test.AlertRuleTest {
			if len(c.ExpAlerts) > 0 {
				fires[c.AlertName] = true
			} else {
				silent[c.AlertName] = true
			}
		}
	}
	for _, rule := range alertingRules(t) {
		if !fires[rule.Alert] || !silent[rule.Alert] {
			t.Errorf("%s: %s needs a case where it fires and one where it does not", rule.Alert, testsFile)
		}
	}
}

// TestEveryAlertHasARunbook: each alert's runbook_url names docs/runbooks/<alert>.md, which exists
// and says what a person paged by it needs.
func TestEveryAlertHasARunbook(t *testing.T) {
	sections := []string{"## Meaning", "## Impact", "## Diagnosis", "## Mitigation", "## Escalation", "kubectl "}
	for _, rule := range alertingRules(t) {
		if got, want := rule.Annotations["runbook_url"], runbookBase+rule.Alert+".md"; got != want {
			t.Errorf("%s: runbook_url %q, want %q", rule.Alert, got, want)
		}
		data, err := os.ReadFile(filepath.Join(runbooksDir, rule.Alert+".md"))
		if err != nil {
			t.Errorf("%s has no runbook: %v", rule.Alert, err)
			continue
		}
		if !strings.HasPrefix(string(data), "# "+rule.Alert+"\n") {
			t.Errorf("%s: the runbook's title is not the alert's name", rule.Alert)
		}
		for _, section := range sections {
			if !strings.Contains(string(data), section) {
				t.Errorf("%s: the runbook has no %q", rule.Alert, section)
			}
		}
	}
}

// TestChartSchemaNamesTheAlertsWithFor: the chart's prometheusRule.for accepts exactly the alerts
// that have a for: to set.
func TestChartSchemaNamesTheAlertsWithFor(t *testing.T) {
	var schema struct {
		Properties struct {
			PrometheusRule struct {
				Properties struct {
					For struct {
						PropertyNames struct {
							Enum []string `json:"enum"`
						} `json:"propertyNames"`
					} `json:"for"`
				} `json:"properties"`
			} `json:"prometheusRule"`
		} `json:"properties"`
	}
	data, err := os.ReadFile("../../charts/appkeeper/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, rule := range alertingRules(t) {
		if rule.For != "" && !slices.Contains(want, rule.Alert) {
			want = append(want, rule.Alert)
		}
	}
	got := schema.Properties.PrometheusRule.Properties.For.PropertyNames.Enum
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("values.schema.json's prometheusRule.for names %v, want the alerts with a for: %v", got, want)
	}
}
