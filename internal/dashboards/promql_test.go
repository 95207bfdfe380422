package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// promtool runs bin/prometheus-<version>/promtool with command (e.g. "check rules") on file,
// written as JSON, which YAML reads; it skips the test when promtool is not built, unless
// APPKEEPER_REQUIRE_MARIADB asks for every tool.
func promtool(t *testing.T, command string, file any) {
	t.Helper()
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "promtool.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	testcluster.Promtool(t, append(strings.Fields(command), path)...)
}

// instanceSeries are what two replicas of the operator serve for one resource: the same series
// from two scrape targets.
func instanceSeries(metric, labels, values string) []map[string]string {
	var out []map[string]string
	for _, replica := range []string{"a", "b"} {
		out = append(out, map[string]string{
			"series": fmt.Sprintf(`%s{%s, job="appkeeper-metrics", instance=%q}`, metric, labels, replica),
			"values": values,
		})
	}
	return out
}

func conditionSeries(resource, condition, status string) []map[string]string {
	var out []map[string]string
	for _, s := range []string{"true", "false", "unknown"} {
		values := "0x130"
		if s == status {
			values = "1x130"
		}
		out = append(out, instanceSeries("appkeeper_resource_condition",
			fmt.Sprintf(`%s, condition=%q, status=%q`, resource, condition, s), values)...)
	}
	return out
}

const (
	shopDB = `kind="MySQL", namespace="shop", name="db"`
	blogWP = `kind="WordPress", namespace="blog", name="wp"`
	// fresh has a backup of a minute and a half ago.
	fresh   = `kind="MySQL", namespace="shop", name="fresh"`
	blogWeb = `kind="WebServer", namespace="blog", name="web"`
	// shopLedger is a cluster of three whose primary ledger-0 failed at 1 h: ledger-1 took over,
	// ledger-2 replicates 7 s behind it.
	shopLedger = `kind="MySQL", namespace="shop", name="ledger"`
)

// scenario: at 2 h, MySQL shop/db has been not Ready for 6600 s and Degraded, its last backup is
// 7100 s old for a schedule of 30 min, its verification failed, it was rolled back once and its
// volume is 80% full. WordPress blog/wp never had a backup since its first condition change
// 6200 s ago. WebServer blog/web is Ready. MySQL shop/ledger failed over from ledger-0 to
// ledger-1 at 1 h.
func scenario() []map[string]string {
	var in []map[string]string
	for _, c := range [][]string{
		{shopDB, "Ready", "false"}, {shopDB, "Degraded", "true"}, {shopDB, "Available", "unknown"},
		{blogWeb, "Ready", "true"}, {blogWeb, "Degraded", "false"}, {blogWP, "Ready", "true"},
	} {
		in = append(in, conditionSeries(c[0], c[1], c[2])...)
	}
	for _, s := range [][]string{
		{"appkeeper_resource_condition_last_transition_timestamp_seconds", shopDB + `, condition="Ready"`, "600x130"},
		{"appkeeper_resource_condition_last_transition_timestamp_seconds", shopDB + `, condition="Degraded"`, "60x130"},
		{"appkeeper_resource_condition_last_transition_timestamp_seconds", blogWP + `, condition="Ready"`, "1000x130"},
		{"appkeeper_backup_last_success_timestamp_seconds", shopDB, "100x130"},
		{"appkeeper_backup_schedule_interval_seconds", shopDB, "1800x130"},
		{"appkeeper_backup_schedule_interval_seconds", blogWP, "1800x130"},
		{"appkeeper_backup_last_success_timestamp_seconds", fresh, "7000x130"},
		{"appkeeper_backup_schedule_interval_seconds", fresh, "3600x130"},
		{"appkeeper_backup_verification_failed", shopDB, "1x130"},
		{"appkeeper_backup_verification_failed", blogWP, "0x130"},
		{"appkeeper_resource_rollbacks_total", shopDB, "0x60 1x70"},
		{"appkeeper_resource_replicas_desired", shopDB, "1x130"},
		{"appkeeper_resource_replicas_ready", shopDB, "0x130"},
		{"appkeeper_volume_claim_info", shopDB + `, persistentvolumeclaim="data-db-0"`, "1x130"},
		{"appkeeper_mysql_member_role", shopLedger + `, member="ledger-0", role="primary"`, "1x59 stale"},
		{"appkeeper_mysql_member_role", shopLedger + `, member="ledger-0", role="unknown"`, "_x60 1x70"},
		{"appkeeper_mysql_member_role", shopLedger + `, member="ledger-1", role="replica"`, "1x59 stale"},
		{"appkeeper_mysql_member_role", shopLedger + `, member="ledger-1", role="primary"`, "_x60 1x70"},
		{"appkeeper_mysql_member_role", shopLedger + `, member="ledger-2", role="replica"`, "1x130"},
		{"appkeeper_mysql_member_lag_seconds", shopLedger + `, member="ledger-1"`, "0x59 stale"},
		{"appkeeper_mysql_member_lag_seconds", shopLedger + `, member="ledger-2"`, "7x130"},
		{"appkeeper_mysql_acknowledging_replicas", shopLedger, "1x59 0x70"},
		{"appkeeper_mysql_commits_alone", shopLedger, "0x130"},
	} {
		in = append(in, instanceSeries(s[0], s[1], s[2])...)
	}
	kubelet := `{namespace="shop", persistentvolumeclaim="data-db-0", job="kubelet", instance="node"}`
	return append(in,
		map[string]string{"series": "kubelet_volume_stats_used_bytes" + kubelet, "values": "8000x130"},
		map[string]string{"series": "kubelet_volume_stats_capacity_bytes" + kubelet, "values": "10000x130"},
		map[string]string{"series": `up{job="appkeeper-metrics", instance="a"}`, "values": "1x130"},
		map[string]string{"series": `up{job="appkeeper-metrics", instance="b"}`, "values": "1x130"},
	)
}

type sample struct {
	labels string
	value  float64
}

// panelWants are what panels show at the end of the scenario, every variable on "All": one value
// a resource however many operator replicas serve it.
var panelWants = []struct {
	dashboard, panel, refID string
	want                    []sample
}{
	{"appkeeper-overview", "Ready instances", "A", []sample{{`{kind="MySQL"}`, 0}, {`{kind="WebServer"}`, 1}, {`{kind="WordPress"}`, 1}}},
	{"appkeeper-overview", "Degraded instances", "A", []sample{{`{kind="MySQL"}`, 1}, {`{kind="WebServer"}`, 0}}},
	{"appkeeper-overview", "Instances that are not Ready", "A", []sample{{`{` + shopDB + `, status="false"}`, 6600}}},
	{"appkeeper-overview", "Automatic rollbacks in the last 24 h", "A", []sample{{`{kind="MySQL"}`, 1}}},
	{"appkeeper-overview", "Instances rolled back in the last 24 h", "A", []sample{{`{` + shopDB + `}`, 1}}},
	{"appkeeper-overview", "Backups too old", "A", []sample{{`{}`, 2}}},
	{"appkeeper-overview", "Backups that failed verification", "A", []sample{{`{}`, 1}}},
	{"appkeeper-overview", "Operator pods up", "A", []sample{{`{}`, 2}}},
	{"appkeeper-mysql", "Instances", "A", []sample{{`{}`, 1}}},
	{"appkeeper-mysql", "Ready", "A", []sample{{`{}`, 0}}},
	{"appkeeper-mysql", "Degraded", "A", []sample{{`{}`, 1}}},
	{"appkeeper-mysql", "Ready and available over time", "A", []sample{
		{`{` + shopDB + `, condition="Ready"}`, 0}, {`{` + shopDB + `, condition="Available"}`, -1}}},
	{"appkeeper-mysql", "Degraded or stalled over time", "A", []sample{{`{` + shopDB + `, condition="Degraded"}`, 1}}},
	{"appkeeper-mysql", "Time since the last successful backup, against the schedule", "A", []sample{
		{`{` + shopDB + `}`, 7100}, {`{` + fresh + `}`, 200}}},
	{"appkeeper-mysql", "Member roles", "A", []sample{
		{`{` + shopLedger + `, member="ledger-0"}`, 0}, {`{` + shopLedger + `, member="ledger-1"}`, 2}, {`{` + shopLedger + `, member="ledger-2"}`, 1}}},
	{"appkeeper-mysql", "Replica lag", "A", []sample{{`{` + shopLedger + `, member="ledger-2"}`, 7}}},
	{"appkeeper-mysql", "Primary waiting for replicas", "A", []sample{{`{` + shopLedger + `}`, 1}}},
	{"appkeeper-mysql", "Volume usage", "A", []sample{{`{` + shopDB + `, persistentvolumeclaim="data-db-0"}`, 0.8}}},
	{"appkeeper-mysql", "Volume used and capacity", "B", []sample{{`{` + shopDB + `, persistentvolumeclaim="data-db-0"}`, 10000}}},
}

// The panels' queries, run by Prometheus's rule test engine on the scenario, show what an
// on-call person should read.
func TestQueriesOnScenario(t *testing.T) {
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	var tests []map[string]any
	for _, w := range panelWants {
		expr := ""
		for _, q := range queries {
			if q.Dashboard == w.dashboard && q.Panel == w.panel && q.RefID == w.refID {
				expr = q.Expr
				break // a panel title may repeat (stat, then table): the first is meant
			}
		}
		if expr == "" {
			t.Fatalf("no query %s in panel %q of %s", w.refID, w.panel, w.dashboard)
		}
		var samples []map[string]any
		for _, s := range w.want {
			samples = append(samples, map[string]any{"labels": s.labels, "value": s.value})
		}
		tests = append(tests, map[string]any{"expr": expr, "eval_time": "120m", "exp_samples": samples})
	}
	promtool(t, "test rules", map[string]any{"rule_files": []string{}, "tests": []map[string]any{{
		"interval": "1m", "input_series": scenario(), "promql_expr_test": tests,
	}}})
}

// Prometheus parses every panel query.
func TestQueriesParse(t *testing.T) {
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	var rules []map[string]string
	for i, q := range queries {
		rules = append(rules, map[string]string{"record": fmt.Sprintf("query_%d", i), "expr": q.Expr})
	}
	promtool(t, "check rules", map[string]any{"groups": []map[string]any{{"name": "dashboards", "rules": rules}}})
}
