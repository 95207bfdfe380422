package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// memberLegend names a cluster member's series by its instance and its pod.
const memberLegend = instanceLegend + " {{member}}"

// perMember keeps one series a member, however many replicas of the operator serve it.
func perMember(expr string) string {
	return "max by (kind, namespace, name, member) (" + expr + ")"
}

// clusterPanels follow the members of each cluster: their roles, as one band a member whose color
// is the role, and how far each replica applies behind its primary.
func clusterPanels(d *dashboard.DashboardBuilder, k kindInfo) {
	scope := k.scope()
	role := func(r string) string { return series("appkeeper_mysql_member_role", scope, `role="`+r+`"`) }
	// A member has one role series at a time: the values 2, 1 and 0 tell which.
	roles := perMember("2 * " + role("primary") + "\nor " + role("replica") + "\nor 0 * " + role("unknown"))
	d.WithRow(row(k.kind + " clusters")).
		WithPanel(stateTimeline("Member roles",
			"Each member of each cluster (an instance of more than one member) as the operator last read it: green while it is the primary and takes writes, blue while it replicates, grey while it could not be read or does neither. A cluster with no green band has no primary (the AppkeeperMySQLNoPrimary alert); a band that turns green is a failover or a switchover.",
			query(roles, memberLegend),
			valueName{"2", "Primary", green},
			valueName{"1", "Replica", blue},
			valueName{"0", "Unknown", grey})).
		WithPanel(timeseriesPanel("Replica lag",
			"How far each replica applies behind its primary. Past 30 s for 5 minutes the AppkeeperMySQLReplicaLagging alert fires: a failover to that replica would wait for it to catch up, and reads through the read Service are that stale. No line: the member does not replicate.",
			unitSeconds, query(perMember(series("appkeeper_mysql_member_lag_seconds", scope)), memberLegend)).
			Thresholds(thresholds(green, threshold{30, red})).
			Span(24)).
		WithPanel(stateTimeline("Primary waiting for replicas",
			"Whether each cluster's primary waits for a replica to hold a commit before it returns it: green while a replica acknowledges; red while none does and every write waits (durability Required: the AppkeeperMySQLWritesWaiting alert); orange while the primary commits alone (durability Preferred past its ackTimeout: the AppkeeperMySQLUnprotected alert), when a failover loses writes. No band: no member takes writes.",
			query(perInstance("clamp_max(2 * "+series("appkeeper_mysql_commits_alone", scope)+
				" + ("+series("appkeeper_mysql_acknowledging_replicas", scope)+" == bool 0), 2)"), instanceLegend),
			valueName{"0", "Protected", green},
			valueName{"1", "Writes wait", red},
			valueName{"2", "Commits alone", orange}))
}
