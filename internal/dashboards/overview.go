package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

const overviewUID = "appkeeper-overview"

// overviewScope selects the resources of the kinds and namespaces the viewer picked.
const overviewScope = `kind=~"$kind", namespace=~"$namespace"`

// operatorScope selects the operator's own series, among those of every controller-runtime
// operator the Prometheus scrapes.
const operatorScope = `job=~"$job"`

// overview is the dashboard an on-call person opens first: which instances need attention,
// across every kind, and whether the operator itself works.
func overview() *dashboard.DashboardBuilder {
	d := newDashboard(overviewUID, "appkeeper / Overview",
		"Health of every appkeeper instance (WebServer, Memcached, PodSet, MySQL, WordPress), their rollouts and backups, and of the operator.").
		WithVariable(jobVariable()).
		WithVariable(labelVariable(varNamespace, "Namespace", "{}")).
		WithVariable(labelVariable(varKind, "Kind", `{namespace=~"$namespace"}`))
	instancePanels(d)
	rolloutAndBackupPanels(d)
	operatorPanels(d)
	return d
}

func instancePanels(d *dashboard.DashboardBuilder) {
	byKind := func(condition string) string {
		return "sum by (kind) (" + perCondition(series("appkeeper_resource_condition", overviewScope,
			`condition="`+condition+`"`, `status="true"`)) + ")"
	}
	notReadyFor := "(time() - " + perInstance(series("appkeeper_resource_condition_last_transition_timestamp_seconds", overviewScope, `condition="Ready"`)) + ")\n" +
		"* on (kind, namespace, name) group_left (status)\n" +
		"max by (kind, namespace, name, status) (" + series("appkeeper_resource_condition", overviewScope, `condition="Ready"`, `status!="true"`) + " == 1)"
	d.WithRow(row("Instances")).
		WithPanel(statPanel("Ready instances",
			"How many instances of each kind are Ready: available, on their current spec, and not degraded.",
			unitCount, query(byKind("Ready"), "{{kind}}")).
			Span(8).Thresholds(thresholds(green))).
		WithPanel(statPanel("Degraded instances",
			"How many instances of each kind report Degraded: something they need is failing (pods crash, a database is unreachable, a rollout was rolled back). Anything above 0 needs a look: see the table below and the kind's dashboard (the AppkeeperInstanceDegraded alert fires after 15 minutes).",
			unitCount, query(byKind("Degraded"), "{{kind}}")).
			Span(8).Thresholds(thresholds(green, threshold{1, red}))).
		WithPanel(statPanel("Stalled instances",
			"How many instances of each kind report Stalled: the operator cannot make progress without a person (an invalid spec, a conflict with an object it does not own, a rollout that timed out).",
			unitCount, query(byKind("Stalled"), "{{kind}}")).
			Span(8).Thresholds(thresholds(green, threshold{1, orange}))).
		WithPanel(tablePanel("Instances that are not Ready",
			"Every instance whose Ready condition is False or Unknown, and for how long. Open the kind's dashboard, or run kubectl describe on the resource, to read the condition's reason and message.",
			unitSeconds, "Not Ready for", tableQuery(notReadyFor)).
			Span(24))
}

func rolloutAndBackupPanels(d *dashboard.DashboardBuilder) {
	rollbacks := "round(increase(" + series("appkeeper_resource_rollbacks_total", overviewScope) + "[24h]))"
	tooOld := backupTooOld(overviewScope)
	failedVerification := perInstance(series("appkeeper_backup_verification_failed", overviewScope)) + " == 1"
	failures := "round(increase(" + series("appkeeper_backup_failures_total", overviewScope) + "[24h]))"
	d.WithRow(row("Rollouts and backups")).
		WithPanel(statPanel("Automatic rollbacks in the last 24 h",
			"How many times the operator rolled an instance back to its previous revision because the new one did not become ready, by kind. Each rollback means a spec change did not take: the instance runs its old revision (the AppkeeperRolloutRolledBack alert).",
			unitCount, query("sum by (kind) ("+perInstance(rollbacks)+")", "{{kind}}")).
			Thresholds(thresholds(green, threshold{1, orange}))).
		WithPanel(statPanel("Backups too old",
			"MySQL and WordPress instances with no successful backup for more than twice their backup schedule's interval: scheduled backups failed or did not run (the AppkeeperBackupTooOld alert). An instance that never had one counts from when it was created.",
			unitCount, query("count("+tooOld+") or vector(0)", "too old")).
			Thresholds(thresholds(green, threshold{1, red}))).
		WithPanel(statPanel("Backups that failed verification",
			"MySQL and WordPress instances whose newest verified backup failed its verification: that backup may not restore (the AppkeeperBackupVerificationFailed alert).",
			unitCount, query("count("+failedVerification+") or vector(0)", "failed verification")).
			Thresholds(thresholds(green, threshold{1, red}))).
		WithPanel(statPanel("Failed backups in the last 24 h",
			"Backups of MySQL and WordPress instances that failed in the last 24 hours, by kind (the AppkeeperBackupFailing alert).",
			unitCount, query("sum by (kind) ("+perInstance(failures)+")", "{{kind}}")).
			Thresholds(thresholds(green, threshold{1, orange}))).
		WithPanel(tablePanel("Instances rolled back in the last 24 h",
			"Each instance the operator rolled back in the last 24 hours and how many times. kubectl describe shows the revision that failed and why.",
			unitCount, "Rollbacks", tableQuery(perInstance(rollbacks)+" > 0")).
			Span(8)).
		WithPanel(tablePanel("Backups too old",
			"Each instance with no successful backup for more than twice its schedule's interval, and for how long. List its backups with kubectl get mysqlbackups or wordpressbackups to see the failed ones.",
			unitSeconds, "No backup for", tableQuery(tooOld)).
			Span(8)).
		WithPanel(tablePanel("Backups that failed verification",
			"Each instance whose newest verified backup failed its verification.",
			unitCount, "Failed", tableQuery(failedVerification)).
			Span(8))
}

// backupTooOld is, for each resource with no successful backup for more than twice its schedule's
// interval, how long it has had none. A resource that never had one counts from its oldest
// condition change, which its first reconcile makes: a lower bound of its age.
func backupTooOld(scope string) string {
	return "(\n  time() - " + perInstance(series("appkeeper_backup_last_success_timestamp_seconds", scope)) + "\n" +
		"  or on (kind, namespace, name)\n" +
		"  time() - min by (kind, namespace, name) (" + series("appkeeper_resource_condition_last_transition_timestamp_seconds", scope) + ")\n" +
		")\n> 2 * " + perInstance(series("appkeeper_backup_schedule_interval_seconds", scope))
}
