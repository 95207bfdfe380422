package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// operatorPanels show whether the operator runs and keeps up with its work, from the metrics
// controller-runtime serves for every controller.
func operatorPanels(d *dashboard.DashboardBuilder) {
	byController := func(metric string) string {
		return "sum by (controller) (rate(" + series(metric, operatorScope) + "[$__rate_interval]))"
	}
	p99 := func(metric string) string {
		return "histogram_quantile(0.99, sum by (controller, le) (rate(" + series(metric, operatorScope) + "[$__rate_interval])))"
	}
	d.WithRow(row("Operator")).
		WithPanel(statPanel("Operator pods up",
			"How many operator pods Prometheus scrapes successfully. 0 means the operator is down or cannot be scraped: nothing is reconciled, rolled back or backed up until it is back (the AppkeeperOperatorDown alert).",
			unitCount, query("sum("+series("up", operatorScope)+") or vector(0)", "up")).
			Span(4).Thresholds(thresholds(red, threshold{1, green}))).
		WithPanel(timeseriesPanel("Reconciles per second by controller",
			"How often each controller (one a kind) compares an instance with its spec and fixes what differs. It rises on changes and restarts; flat at 0 while instances change means the operator is stuck.",
			unitPerSec, query(byController("controller_runtime_reconcile_total"), "{{controller}}")).
			Span(10)).
		WithPanel(timeseriesPanel("Reconcile errors per second by controller",
			"Reconciles that returned an error and will be retried with back-off. A steady rate means some instance keeps failing: the Degraded and Stalled panels above and the operator's log name it (the AppkeeperOperatorNotReconciling alert).",
			unitPerSec, query(byController("controller_runtime_reconcile_errors_total"), "{{controller}}")).
			Span(10)).
		WithPanel(timeseriesPanel("Work queue depth by controller",
			"Instances waiting for their controller to reconcile them. A queue that grows and does not drain means the operator cannot keep up.",
			unitCount, query("sum by (controller) ("+series("workqueue_depth", operatorScope)+")", "{{controller}}")).
			Span(8)).
		WithPanel(timeseriesPanel("Time in the work queue (99th percentile)",
			"How long an instance waits in the queue before its controller picks it up: the delay between a change and the operator acting on it.",
			unitSeconds, query(p99("workqueue_queue_duration_seconds_bucket"), "{{controller}}")).
			Span(8)).
		WithPanel(timeseriesPanel("Reconcile duration (99th percentile)",
			"How long one reconcile of an instance takes, by controller.",
			unitSeconds, query(p99("workqueue_work_duration_seconds_bucket"), "{{controller}}")).
			Span(8))
}
