package main

import (
	"strings"
	"testing"
)

const alertRule = `groups:
  - name: things
    rules:
      - alert: ThingDown
        expr: up == 0
        for: 5m
        labels:
          severity: critical
        annotations:
          summary: "{{ $labels.name }} is down"
          description: "{{ $labels.name }} is down"
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
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the template lacks %s:\n%s", want, got)
		}
	}
}

func TestReadRulesRefuses(t *testing.T) {
	for name, data := range map[string]string{
		"no severity":        strings.Replace(alertRule, "severity: critical", "team: db", 1),
		"no description":     strings.Replace(alertRule, `description: "{{ $labels.name }} is down"`, "", 1),
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
