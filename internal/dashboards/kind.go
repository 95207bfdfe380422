package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// kindInfo is what a kind's dashboard needs to know of the kind.
type kindInfo struct {
	kind string
	// what one instance runs, in the words of the dashboard's description.
	what string
	// backups: the kind has backups and a data volume.
	backups bool
	// clusters: an instance of the kind may run several members, one of them primary.
	clusters bool
}

var kinds = []kindInfo{
	{kind: "WebServer", what: "a web server Deployment with its Service"},
	{kind: "Memcached", what: "a Memcached Deployment with its Service"},
	{kind: "PodSet", what: "a set of pods the operator manages one by one"},
	{kind: "MySQL", what: "a MySQL server or cluster with its data volumes and scheduled backups", backups: true, clusters: true},
	{kind: "WordPress", what: "a WordPress site with its content volume, its database and scheduled backups", backups: true},
}

func (k kindInfo) uid() string {
	return "appkeeper-" + strings.ToLower(k.kind)
}

// scope selects the instances of this kind the viewer picked.
func (k kindInfo) scope() string {
	return `kind="` + k.kind + `", namespace=~"$namespace", name=~"$name"`
}

// kindDashboard follows each instance of one kind over time.
func kindDashboard(k kindInfo) *dashboard.DashboardBuilder {
	d := newDashboard(k.uid(), "appkeeper / "+k.kind,
		"Each "+k.kind+" instance ("+k.what+") over time: its conditions, replicas and rollouts"+
			map[bool]string{true: ", backups and volume usage.", false: "."}[k.backups]).
		WithVariable(labelVariable(varNamespace, "Namespace", `{kind="`+k.kind+`"}`)).
		WithVariable(labelVariable(varName, k.kind, `{kind="`+k.kind+`", namespace=~"$namespace"}`))
	healthPanels(d, k)
	rolloutPanels(d, k)
	if k.clusters {
		clusterPanels(d, k)
	}
	if k.backups {
		backupPanels(d, k)
		volumePanels(d, k)
	}
	return d
}

func healthPanels(d *dashboard.DashboardBuilder, k kindInfo) {
	scope := k.scope()
	count := func(condition string) string {
		return "count(" + perCondition(series("appkeeper_resource_condition", scope, `condition="`+condition+`"`, `status="true"`)) + " == 1) or vector(0)"
	}
	d.WithRow(row("Health")).
		WithPanel(statPanel("Instances", "How many "+k.kind+" instances the selection holds.",
			unitCount, query("count("+perInstance(series("appkeeper_resource_replicas_desired", scope))+") or vector(0)", "instances")).
			Thresholds(thresholds(blue))).
		WithPanel(statPanel("Ready", "Instances that are Ready: available, on their current spec, not degraded.",
			unitCount, query(count("Ready"), "Ready")).
			Thresholds(thresholds(green))).
		WithPanel(statPanel("Degraded", "Instances that report Degraded: something they need is failing. The timeline below shows since when.",
			unitCount, query(count("Degraded"), "Degraded")).
			Thresholds(thresholds(green, threshold{1, red}))).
		WithPanel(statPanel("Stalled", "Instances the operator cannot make progress on without a person (invalid spec, a conflicting object, a rollout that timed out).",
			unitCount, query(count("Stalled"), "Stalled")).
			Thresholds(thresholds(green, threshold{1, orange}))).
		WithPanel(conditionTimeline("Ready and available over time",
			"Each instance's Ready and Available conditions (and its kind's own, such as DatabaseReady) over time: green while True, red while False, grey while Unknown. kubectl describe shows the reason of the current state.",
			green, red, query(conditionValue(scope, `condition!~"Progressing|Degraded|Stalled"`), instanceLegend+" {{condition}}"))).
		WithPanel(conditionTimeline("Degraded or stalled over time",
			"Each instance's Degraded and Stalled conditions over time: red while True (the instance needs attention), green while False.",
			red, green, query(conditionValue(scope, `condition=~"Degraded|Stalled"`), instanceLegend+" {{condition}}"))).
		WithPanel(conditionTimeline("Rolling out over time",
			"Each instance's Progressing condition: blue while the operator rolls out a change, green once the instance runs its current spec.",
			blue, green, query(conditionValue(scope, `condition="Progressing"`), instanceLegend))).
		WithPanel(timeseriesPanel("Desired and ready replicas",
			"Replicas each instance asks for against those ready to serve. Ready below desired for long means pods do not start or fail their probes.",
			unitCount,
			query(perInstance(series("appkeeper_resource_replicas_desired", scope)), instanceLegend+" desired"),
			query(perInstance(series("appkeeper_resource_replicas_ready", scope)), instanceLegend+" ready")).
			Span(24))
}

func rolloutPanels(d *dashboard.DashboardBuilder, k kindInfo) {
	perHour := func(metric string) string {
		return "sum(increase(" + metric + `{kind="` + k.kind + `"}[1h]))`
	}
	d.WithRow(row("Rollouts")).
		WithPanel(timeseriesPanel("Rollouts per hour, every namespace",
			"Rollouts of a new revision the operator started, completed and rolled back in the past hour, for every "+k.kind+" in every namespace (these counts are kept by kind only). Rolled back means the new revision did not become ready in time and the previous one was restored.",
			unitCount,
			query(perHour("appkeeper_rollouts_started_total"), "started"),
			query(perHour("appkeeper_rollouts_completed_total"), "completed"),
			query(perHour("appkeeper_rollouts_rolled_back_total"), "rolled back"))).
		WithPanel(timeseriesPanel("Automatic rollbacks per instance",
			"How many times in all the operator rolled each instance back. A step up is a rollback: kubectl describe shows which revision failed and why.",
			unitCount, query(perInstance(series("appkeeper_resource_rollbacks_total", k.scope())), instanceLegend)))
}
