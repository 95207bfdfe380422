package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

func backupPanels(d *dashboard.DashboardBuilder, k kindInfo) {
	scope := k.scope()
	gauge := func(metric string) string { return perInstance(series(metric, scope)) }
	d.WithRow(row("Backups")).
		WithPanel(timeseriesPanel("Time since the last successful backup, against the schedule",
			"How long ago each instance's newest successful backup finished, beside the time between two scheduled backups. The age should fall back below the interval at every scheduled backup; above twice the interval, backups are being missed. No line: no backup has succeeded yet.",
			unitSeconds,
			query("time() - "+gauge("appkeeper_backup_last_success_timestamp_seconds"), instanceLegend+" since last backup"),
			query(gauge("appkeeper_backup_schedule_interval_seconds"), instanceLegend+" schedule interval"))).
		WithPanel(timeseriesPanel("Time since the last verified backup",
			"How long ago the newest backup that passed its verification (a test restore) finished. A backup is only as good as the last one that restored.",
			unitSeconds, query("time() - "+gauge("appkeeper_backup_last_verified_timestamp_seconds"), instanceLegend))).
		WithPanel(timeseriesPanel("Backup duration",
			"How long the newest successful backup took. A duration growing toward the schedule's interval means backups will soon overlap.",
			unitSeconds, query(gauge("appkeeper_backup_last_duration_seconds"), instanceLegend)).
			Span(8)).
		WithPanel(timeseriesPanel("Backup size",
			"Size of the newest successful backup's artifact in the object store. A sudden drop can mean data went missing; steady growth, that the store needs room.",
			unitBytes, query(gauge("appkeeper_backup_last_size_bytes"), instanceLegend)).
			Span(8)).
		WithPanel(timeseriesPanel("Failed backups per hour",
			"Backups of each instance that failed in the past hour. kubectl get mysqlbackups or wordpressbackups, and describe on the failed one, say why.",
			unitCount, query(perInstance("increase("+series("appkeeper_backup_failures_total", scope)+"[1h])"), instanceLegend)).
			Span(8)).
		WithPanel(stateTimeline("Backup verification",
			"Whether each instance's newest verified backup passed its verification: green while it passed, red while it failed (that backup may not restore).",
			query(gauge("appkeeper_backup_verification_failed"), instanceLegend),
			valueName{"0", "Passed", green},
			valueName{"1", "Failed", red}))
}

// volumePanels join kubelet's volume statistics, by claim, with the claims that hold each
// instance's data.
func volumePanels(d *dashboard.DashboardBuilder, k kindInfo) {
	claims := "max by (kind, namespace, name, persistentvolumeclaim) (" + series("appkeeper_volume_claim_info", k.scope()) + ")"
	byClaim := func(metric string) string {
		return "max by (namespace, persistentvolumeclaim) (" + metric + "{})"
	}
	ofInstance := func(expr string) string {
		return "(" + expr + ")\n* on (namespace, persistentvolumeclaim) group_right ()\n" + claims
	}
	used, capacity := byClaim("kubelet_volume_stats_used_bytes"), byClaim("kubelet_volume_stats_capacity_bytes")
	legend := instanceLegend + " {{persistentvolumeclaim}}"
	d.WithRow(row("Storage")).
		WithPanel(timeseriesPanel("Volume usage",
			"How full each volume holding an instance's data is. Past 90% the database or site may stop writing (the AppkeeperVolumeAlmostFull alert): grow the claim (if its StorageClass allows) or free space. No line: kubelet's volume statistics are not scraped.",
			unitRatio, query(ofInstance(used+"\n/\n"+capacity), legend)).
			Max(1).
			Thresholds(thresholds(green, threshold{0.8, orange}, threshold{0.9, red}))).
		WithPanel(timeseriesPanel("Volume used and capacity",
			"Bytes used on each volume holding an instance's data, beside the volume's capacity.",
			unitBytes,
			query(ofInstance(used), legend+" used"),
			query(ofInstance(capacity), legend+" capacity")))
}
