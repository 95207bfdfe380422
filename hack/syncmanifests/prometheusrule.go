package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

const (
	// RulesSource holds appkeeper's alerts as Prometheus rule groups; promtool tests it as is.
	rulesSource = "config/prometheus/rules/alerts.yaml"
	// ruleManifest is the PrometheusRule for "kubectl apply -f config/prometheus/".
	ruleManifest = "config/prometheus/prometheusrule.yaml"
	ruleName     = "appkeeper-alerts"
	// RunbookBaseURL is where every runbook_url of rulesSource points, the repository's
	// docs/runbooks; the chart's prometheusRule.runbookBaseURL replaces it.
	runbookBaseURL = "https://github.com/appkeeper/appkeeper/blob/main/docs/runbooks/"

	// operatorJob is the job the rules select the operator's own series by: a ServiceMonitor of
	// the Service appkeeper-metrics scrapes under that name. The chart's prometheusRule.operatorJob
	// replaces it.
	operatorJob = "appkeeper-metrics"

	// forPrefix marks, in the chart's marshaled groups, the for: that prometheusRule.for sets.
	forPrefix = "appkeeper-for-"
)

// RuleGroups is a Prometheus rule file; unknown fields are refused rather than dropped.
type ruleGroups struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// writePrometheusRules writes the PrometheusRule of config/prometheus and the chart's template.
func writePrometheusRules() error {
	data, err := os.ReadFile(rulesSource)
	if err != nil {
		return err
	}
	rules, err := readRules(data)
	if err != nil {
		return fmt.Errorf("%s: %w", rulesSource, err)
	}
	manifest, err := yaml.Marshal(map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name":      ruleName,
			"namespace": "appkeeper-system",
			"labels":    map[string]string{"app.kubernetes.io/name": "appkeeper"},
		},
		"spec": rules,
	})
	if err != nil {
		return err
	}
	if err := write(ruleManifest, header+string(manifest)); err != nil {
		return err
	}
	template, err := chartRules(rules)
	if err != nil {
		return err
	}
	return write(filepath.Join(chartDir, "prometheusrule.yaml"), template)
}

// readRules decodes a rule file and checks what the chart's template relies on: every alert has a
// severity, a summary, a description and the runbook_url of its name.
func readRules(data []byte) (*ruleGroups, error) {
	rules := &ruleGroups{}
	if err := yaml.UnmarshalStrict(data, rules); err != nil {
		return nil, err
	}
	if len(rules.Groups) == 0 {
		return nil, errors.New("no rule group")
	}
	for _, group := range rules.Groups {
		for _, r := range group.Rules {
			if r.Alert == "" {
				continue
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				return nil, fmt.Errorf("alert %s needs a severity label, a summary and a description", r.Alert)
			}
			if want := runbookBaseURL + r.Alert + ".md"; r.Annotations["runbook_url"] != want {
				return nil, fmt.Errorf("alert %s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
			}
			if strings.HasPrefix(r.For, forPrefix) {
				return nil, fmt.Errorf("alert %s: for: %s", r.Alert, r.For)
			}
		}
	}
	return rules, nil
}

// chartRules returns the chart's PrometheusRule template: rendered under prometheusRule.enabled,
// labeled with prometheusRule.labels, each alert's for: settable through prometheusRule.for, its
// runbook_url under prometheusRule.runbookBaseURL and the operator's job prometheusRule.operatorJob. The rules' own {{ }}, Prometheus's templates,
// are escaped from Helm.
func chartRules(source *ruleGroups) (string, error) {
	rules := &ruleGroups{Groups: make([]ruleGroup, len(source.Groups))}
	defaults := map[string]string{}
	for i, group := range source.Groups {
		rules.Groups[i] = group
		rules.Groups[i].Rules = make([]rule, len(group.Rules))
		for j, r := range group.Rules {
			if r.Alert != "" && r.For != "" {
				defaults[r.Alert] = r.For
				r.For = forPrefix + r.Alert
			}
			rules.Groups[i].Rules[j] = r
		}
	}
	data, err := yaml.Marshal(map[string]any{"spec": rules})
	if err != nil {
		return "", err
	}
	text := strings.NewReplacer("{{", `{{ "{{" }}`, "}}", `{{ "}}" }}`).Replace(string(data))
	text = strings.ReplaceAll(text, runbookBaseURL, `{{ .Values.prometheusRule.runbookBaseURL | trimSuffix "/" }}/`)
	text = strings.ReplaceAll(text, `job="`+operatorJob+`"`, `job={{ .Values.prometheusRule.operatorJob | quote }}`)
	text = strings.ReplaceAll(text, "(job "+operatorJob+")", "(job {{ .Values.prometheusRule.operatorJob }})")
	if strings.Contains(text, operatorJob) {
		return "", fmt.Errorf("the job %s is named where prometheusRule.operatorJob cannot replace it", operatorJob)
	}
	for alert, duration := range defaults {
		setting := fmt.Sprintf(`for: {{ index .Values.prometheusRule.for %q | default %q | quote }}`, alert, duration)
		text = strings.ReplaceAll(text, "for: "+forPrefix+alert+"\n", setting+"\n")
	}
	if strings.Contains(text, forPrefix) {
		return "", errors.New("a for: was left unsettable once marshaled")
	}
	return header + chartRuleHead + text + "{{- end }}\n", nil
}

const chartRuleHead = `{{- if .Values.prometheusRule.enabled }}
# appkeeper's alerts; each runbook_url names the page of docs/runbooks that says what to do.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: ` + ruleName + `
  namespace: {{ .Release.Namespace }}
  {{- /* prometheusRule.labels are those a Prometheus selects rules by: they win over the chart's. */}}
  {{- $labels := include "appkeeper.labels" . | fromYaml }}
  {{- range $name, $value := .Values.prometheusRule.labels }}
  {{- $_ := set $labels $name (toString $value) }}
  {{- end }}
  labels:
    {{- toYaml $labels | nindent 4 }}
`
