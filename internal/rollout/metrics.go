package rollout

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The rollouts of every instance, counted by kind only: one series per kind keeps the cardinality
// bounded whatever the number of instances. The per-instance count of rollbacks is read from each
// instance's status by the metrics collector.
var (
	rolloutsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "appkeeper_rollouts_started_total",
		Help: "Rollouts of a new revision of an instance's pods that the operator started, by kind. " +
			"A new instance's first revision is not a rollout.",
	}, []string{"kind"})
	rolloutsCompleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "appkeeper_rollouts_completed_total",
		Help: "Rollouts that completed, all pods of the new revision available, by kind.",
	}, []string{"kind"})
	rolloutsRolledBack = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "appkeeper_rollouts_rolled_back_total",
		Help: "Rollouts that failed and that the operator rolled back to the last good revision, by kind.",
	}, []string{"kind"})
)

// kinds are the kinds whose rollouts are counted: their series start at zero, so that a rate
// over the first rollout of the operator's life sees it.
var kinds = []string{"WebServer", "Memcached", "PodSet", "MySQL", "WordPress"}

func init() {
	ctrlmetrics.Registry.MustRegister(rolloutsStarted, rolloutsCompleted, rolloutsRolledBack)
	for _, kind := range kinds {
		for _, counter := range []*prometheus.CounterVec{rolloutsStarted, rolloutsCompleted, rolloutsRolledBack} {
			counter.WithLabelValues(kind)
		}
	}
}

// counts is whether d changes the rollout in a way the counters record, so that its status is
// written over the copy the pass read and counted only once written.
func (d Decision) counts() bool {
	return d.Started || d.Completed || d.RolledBack != nil
}

// count adds the rollout d started, completed or rolled back to the counters of kind.
func (d Decision) count(kind string) {
	if d.Started {
		rolloutsStarted.WithLabelValues(kind).Inc()
	}
	if d.Completed {
		rolloutsCompleted.WithLabelValues(kind).Inc()
	}
	if d.RolledBack != nil {
		rolloutsRolledBack.WithLabelValues(kind).Inc()
	}
}
