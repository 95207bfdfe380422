package main

import (
	"strings"
	"testing"
)

const alertRule = `groups:
  - name: things
    rules:
      - alert: ThingDown
        expr: up{job="appkeeper-metrics"} == 0
        for: 5m
        labels:
          severity: critical
        annotations:
          summary: "{{ $labels.name }} is down"
          description: "{{ $labels.name }} (job appkeeper-metrics) is down"
          runbook_url: https://github.com/appkeeper/appkeeper/blob/main/docs/runbooks/ThingDown.md
`

func TestChartRules(t *testing.T) {
	rules, err := readRules([]byte(alertRule))
	if err != nil {
		t.Fatal(err)
	}
	got, err := chartRules(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`summary: '{{ "{{" }} $labels.name {{ "}}" }} is down'`,
		`runbook_url: {{ .Values.prometheusRule.runbookBaseURL | trimSuffix "/" }}/ThingDown.md`,
		`for: {{ index .Values.prometheusRule.for "ThingDown" | default "5m" | quote }}`,
		`up{job={{ .Values.prometheusRule.operatorJob | quote }}} == 0`,
		`(job {{ .Values.prometheusRule.operatorJob }}) is down`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the template lacks %s:\n%s", want, got)
		}
	}
}

func TestReadRulesRefuses(t *testing.T) {
	for name, data := range map[string]string{
		"no severity":        strings.Replace(alertRule, "severity: critical", "team: db", 1),
		"no description":     strings.Replace(alertRule, `description: "{{ $labels.name }} (job appkeeper-metrics) is down"`, "", 1),
		"another runbook":    strings.Replace(alertRule, "runbooks/ThingDown.md", "runbooks/Other.md", 1),
		"an unknown field":   strings.Replace(alertRule, "for: 5m", "for: 5m\n        keep_firing: 5m", 1),
		"the marker in for:": strings.Replace(alertRule, "for: 5m", "for: "+forPrefix+"ThingDown", 1),
		"no group":           "groups: []\n",
	} {
		if _, err := readRules([]byte(data)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A job named where the chart's value cannot replace it would leave the rules on the default job.
func TestChartRulesRefuseAJobTheValueMisses(t *testing.T) {
	rules, err := readRules([]byte(strings.Replace(alertRule, `summary: "{{ $labels.name }} is down"`, `summary: "appkeeper-metrics is down"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chartRules(rules); err == nil || !strings.Contains(err.Error(), "prometheusRule.operatorJob") {
		t.Errorf("error %v, want one naming prometheusRule.operatorJob", err)
	}
}
