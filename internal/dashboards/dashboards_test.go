package dashboards

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// loaded reads each dashboard back from its JSON, as Grafana would import it.
func loaded(t *testing.T) map[string]dashboard.Dashboard {
	t.Helper()
	plugins.RegisterDefaultPlugins()
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]dashboard.Dashboard{}
	for _, d := range all {
		var strict, model dashboard.Dashboard
		if err := strictErrors(strict.UnmarshalJSONStrict(d.JSON)); err != nil {
			t.Fatalf("%s does not read back as a dashboard: %v", d.FileName(), err)
		}
		// The strict decoding reports unknown and missing fields, but keeps no panel: a panel's
		// empty list of errors reads as an error to it.
		if err := json.Unmarshal(d.JSON, &model); err != nil {
			t.Fatalf("%s: %v", d.FileName(), err)
		}
		if err := model.Validate(); err != nil {
			t.Fatalf("%s: %v", d.FileName(), err)
		}
		out[d.UID] = model
	}
	return out
}

// strictErrors returns the errors of a strict unmarshal, whose empty list of errors is no error.
func strictErrors(err error) error {
	var list cog.BuildErrors
	if errors.As(err, &list) && len(list) == 0 {
		return nil
	}
	return err
}

// The UIDs are those Grafana links and bookmarks keep: changing one breaks them.
func TestUIDsAreFixed(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var uids []string
	for _, d := range all {
		uids = append(uids, d.UID)
	}
	want := []string{"appkeeper-overview", "appkeeper-webserver", "appkeeper-memcached", "appkeeper-podset", "appkeeper-mysql", "appkeeper-wordpress"}
	if !slices.Equal(uids, want) {
		t.Errorf("UIDs %v, want %v", uids, want)
	}
}

// Every dashboard has what Grafana requires, and every panel what an on-call person needs:
// a title, a description, a unit, the dashboard's data source and at least one query.
func TestDashboardsAreComplete(t *testing.T) {
	for uid, d := range loaded(t) {
		if d.Uid == nil || *d.Uid != uid || d.Title == nil || *d.Title == "" || d.SchemaVersion == 0 {
			t.Errorf("%s: uid %v, title %v, schemaVersion %d", uid, d.Uid, d.Title, d.SchemaVersion)
		}
		ids := map[uint32]bool{}
		for _, p := range d.Panels {
			if p.RowPanel != nil {
				ids[p.RowPanel.Id] = true
				continue
			}
			panel := p.Panel
			if panel.Id == nil || ids[*panel.Id] {
				t.Errorf("%s: panel %v has no id of its own", uid, panel.Title)
			} else {
				ids[*panel.Id] = true
			}
			checkPanel(t, uid, panel)
		}
	}
}

func checkPanel(t *testing.T, uid string, panel *dashboard.Panel) {
	t.Helper()
	title := deref(panel.Title)
	where := uid + ", panel " + title
	if title == "" || deref(panel.Description) == "" {
		t.Errorf("%s: a panel needs a title and a description", where)
	}
	if panel.Datasource == nil || deref(panel.Datasource.Uid) != "${datasource}" {
		t.Errorf("%s: data source %v, want the dashboard's variable", where, panel.Datasource)
	}
	if len(panel.Targets) == 0 {
		t.Errorf("%s: no query", where)
	}
	if panel.Type != "state-timeline" && (panel.FieldConfig == nil || deref(panel.FieldConfig.Defaults.Unit) == "") {
		t.Errorf("%s: no unit", where)
	}
	if g := panel.GridPos; g == nil || g.W == 0 || g.H == 0 || g.X+g.W > 24 {
		t.Errorf("%s: grid position %v off the 24 columns", where, g)
	}
}

// metricsAllowed are the series the dashboards may read: the operator's, as its metrics
// documentation lists them, and those controller-runtime, kubelet and Prometheus serve.
var metricsAllowed = []string{
	"appkeeper_resource_condition",
	"appkeeper_resource_condition_last_transition_timestamp_seconds",
	"appkeeper_resource_replicas_desired",
	"appkeeper_resource_replicas_ready",
	"appkeeper_resource_rollbacks_total",
	"appkeeper_rollouts_started_total",
	"appkeeper_rollouts_completed_total",
	"appkeeper_rollouts_rolled_back_total",
	"appkeeper_backup_last_success_timestamp_seconds",
	"appkeeper_backup_last_duration_seconds",
	"appkeeper_backup_last_size_bytes",
	"appkeeper_backup_last_verified_timestamp_seconds",
	"appkeeper_backup_verification_failed",
	"appkeeper_backup_failures_total",
	"appkeeper_backup_schedule_interval_seconds",
	"appkeeper_volume_claim_info",
	"appkeeper_mysql_member_role",
	"appkeeper_mysql_member_lag_seconds",
	"appkeeper_mysql_acknowledging_replicas",
	"appkeeper_mysql_commits_alone",
	"appkeeper_mysql_primary_epoch",
	"controller_runtime_reconcile_total",
	"controller_runtime_reconcile_errors_total",
	"workqueue_depth",
	"workqueue_queue_duration_seconds_bucket",
	"workqueue_work_duration_seconds_bucket",
	"kubelet_volume_stats_used_bytes",
	"kubelet_volume_stats_capacity_bytes",
	"up",
}

var (
	// selector matches a metric name and its braces; the dashboards write every selector so.
	selector = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{`)
	// metricLike matches names of the families the dashboards read, wherever they appear.
	metricLike = regexp.MustCompile(`\b(appkeeper_|controller_runtime_|workqueue_|kubelet_)[a-zA-Z0-9_:]*`)
)

// Every query names only known metrics, each with a selector, so that a renamed metric fails here.
func TestQueriesNameKnownMetrics(t *testing.T) {
	for uid, d := range loaded(t) {
		for _, expr := range expressions(d) {
			for _, m := range selector.FindAllStringSubmatch(expr, -1) {
				if !slices.Contains(metricsAllowed, m[1]) {
					t.Errorf("%s: %s reads %s, which no one serves", uid, expr, m[1])
				}
			}
			if bare := len(metricLike.FindAllString(expr, -1)) - len(selector.FindAllString(expr, -1)); bare > 0 {
				t.Errorf("%s: %s names a metric without a selector", uid, expr)
			}
		}
	}
}

// expressions returns the dashboard's panel queries and its variables' queries.
func expressions(d dashboard.Dashboard) []string {
	var out []string
	for _, p := range d.Panels {
		if p.Panel == nil {
			continue
		}
		data, _ := json.Marshal(p.Panel.Targets)
		var targets []struct{ Expr string }
		_ = json.Unmarshal(data, &targets)
		for _, target := range targets {
			out = append(out, target.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" && v.Query != nil && v.Query.String != nil {
			out = append(out, *v.Query.String)
		}
	}
	return out
}

// Every variable a query uses is one of the dashboard's, defined before the variables that use it,
// or one Grafana defines.
func TestVariablesAreDefined(t *testing.T) {
	for uid, d := range loaded(t) {
		defined := map[string]bool{}
		for _, v := range d.Templating.List {
			if v.Query != nil && v.Query.String != nil {
				checkVariables(t, uid+" variable "+v.Name, *v.Query.String, defined)
			}
			defined[v.Name] = true
		}
		for _, expr := range expressions(d) {
			checkVariables(t, uid, expr, defined)
		}
		for _, v := range []string{varDatasource, varNamespace} {
			if !defined[v] {
				t.Errorf("%s: no %s variable", uid, v)
			}
		}
	}
}

func checkVariables(t *testing.T, where, expr string, defined map[string]bool) {
	t.Helper()
	for _, m := range variableRef.FindAllStringSubmatch(expr, -1) {
		name := m[1] + m[2]
		if !defined[name] && !strings.HasPrefix(name, "__") {
			t.Errorf("%s: %s uses $%s, which is not defined before", where, expr, name)
		}
	}
}

// Queries gives every panel query with no variable left, for a test to run against Prometheus.
func TestQueriesSubstituteVariables(t *testing.T) {
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, d := range loaded(t) {
		for _, p := range d.Panels {
			if p.Panel != nil {
				want += len(p.Panel.Targets)
			}
		}
	}
	if len(queries) != want {
		t.Errorf("%d queries, want the %d of the panels", len(queries), want)
	}
	for _, q := range queries {
		if strings.Contains(q.Expr, "$") || q.Expr == "" || q.RefID == "" {
			t.Errorf("%s, %s %s: %q", q.Dashboard, q.Panel, q.RefID, q.Expr)
		}
		if strings.Count(q.Expr, "(") != strings.Count(q.Expr, ")") || strings.Count(q.Expr, "{") != strings.Count(q.Expr, "}") {
			t.Errorf("%s, %s: unbalanced %s", q.Dashboard, q.Panel, q.Expr)
		}
	}
}
