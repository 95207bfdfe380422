// Package metrics serves appkeeper's own metrics, the appkeeper_ family, beside controller-runtime's:
// at every scrape, a collector reads the resources and their backups from the manager's informer
// cache, which the controllers already fill, and reports each resource's conditions, replicas,
// rollbacks, backups and volumes, and the members of each MySQL cluster. A scrape makes no
// request to the API server, and the series of a deleted resource go with it. The rollout counters
// by kind are counted where rollouts are decided, in the rollout package.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// listTimeout bounds the reads of one collection. The cache answers from memory once synced; the
// bound only keeps a scrape from hanging on a cache that is not.
const listTimeout = 5 * time.Second

// Collector reports the appkeeper_ series of every resource in a cache.
type Collector struct {
	reader client.Reader
	// ready is closed once this replica leads: before, its controllers have not started, its
	// cache holds nothing of the resources, and the leader's series are the ones to read.
	ready <-chan struct{}
	now   func() time.Time

	// mu makes collections run one at a time: they share failures, intervals and conditions.
	mu         sync.Mutex
	failures   *failureTally
	intervals  *scheduleIntervals
	conditions conditionPairs
}

// NewCollector reads the resources from reader (a cache) once ready is closed.
func NewCollector(reader client.Reader, ready <-chan struct{}) *Collector {
	return &Collector{reader: reader, ready: ready, now: time.Now, failures: newFailureTally(), intervals: newScheduleIntervals(),
		conditions: conditionPairs{}}
}

// Register adds the collector of mgr's resources to controller-runtime's registry, which the
// manager's metrics endpoint serves. A manager built again in the same process replaces the
// collector of the one before.
func Register(mgr ctrl.Manager) error {
	return register(ctrlmetrics.Registry, NewCollector(mgr.GetCache(), mgr.Elected()))
}

// register adds c to registry in place of the collector registered before, if any.
func register(registry prometheus.Registerer, c *Collector) error {
	err := registry.Register(c)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		registry.Unregister(are.ExistingCollector)
		err = registry.Register(c)
	}
	if err != nil {
		return fmt.Errorf("register the appkeeper metrics: %w", err)
	}
	return nil
}

// Describe sends the descriptors of every series.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range descs {
		ch <- d
	}
}

// Collect sends the series of every resource the cache holds, once this replica leads.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	select {
	case <-c.ready:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	snap, err := read(ctx, c.reader)
	if err != nil {
		// Reported rather than half a picture: a resource missing from a scrape reads as deleted.
		ch <- prometheus.NewInvalidMetric(conditionDesc, err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.collect(emitter{ch: ch, conditions: c.conditions}, snap)
}

func (c *Collector) collect(e emitter, snap *snapshot) {
	now := c.now()
	backups := indexBackups(snap.mysqlBackups.Items, snap.wordPressBackups.Items)
	c.failures.begin()
	for _, in := range snap.instances() {
		pairs := pairsOf(&in)
		e.emitInstance(&in, pairs)
		e.emitMembers(&in, pairs)
		if in.kind != kindMySQL && in.kind != kindWordPress {
			continue
		}
		key := resourceKey{in.kind, in.namespace, in.name}
		s := backups[key]
		e.emitBackups(pairs, s, c.failures.count(key, s.failedBackups()))
		if interval, ok := c.intervals.of(in.backupPolicy, now); ok {
			e.gauge(backupScheduleIntervalDesc, interval.Seconds(), pairs)
		}
	}
	c.failures.end()
}

// snapshot is what one collection reads from the cache.
type snapshot struct {
	webServers       appsv1alpha1.WebServerList
	memcacheds       appsv1alpha1.MemcachedList
	podSets          appsv1alpha1.PodSetList
	mySQLs           appsv1alpha1.MySQLList
	wordPresses      appsv1alpha1.WordPressList
	mysqlBackups     appsv1alpha1.MySQLBackupList
	wordPressBackups appsv1alpha1.WordPressBackupList
}

// read lists every kind from reader. The objects are the cache's own, not copies: the collector
// only reads them, and copying a thousand resources would cost more than the rest of a scrape.
func read(ctx context.Context, reader client.Reader) (*snapshot, error) {
	s := &snapshot{}
	for _, list := range []client.ObjectList{&s.webServers, &s.memcacheds, &s.podSets, &s.mySQLs, &s.wordPresses, &s.mysqlBackups, &s.wordPressBackups} {
		if err := reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list %T from the cache: %w", list, err)
		}
	}
	return s, nil
}

func (s *snapshot) instances() []instance {
	out := instancesOf(s.webServers.Items, webServer)
	out = append(out, instancesOf(s.memcacheds.Items, memcached)...)
	out = append(out, instancesOf(s.podSets.Items, podSet)...)
	out = append(out, instancesOf(s.mySQLs.Items, mySQL)...)
	return append(out, instancesOf(s.wordPresses.Items, wordPress)...)
}

// emitter sends series to a collection's channel.
type emitter struct {
	ch         chan<- prometheus.Metric
	conditions conditionPairs
}

func (e emitter) gauge(d *prometheus.Desc, v float64, labels []*dto.LabelPair) {
	e.ch <- &sample{desc: d, valueType: prometheus.GaugeValue, value: v, labels: labels}
}

func (e emitter) counter(d *prometheus.Desc, v float64, labels []*dto.LabelPair) {
	e.ch <- &sample{desc: d, valueType: prometheus.CounterValue, value: v, labels: labels}
}

// emitInstance emits the series every resource has: its conditions, replicas, rollbacks and the
// volume claim of its data.
func (e emitter) emitInstance(in *instance, pairs resourcePairs) {
	for i := range in.conditions {
		c := &in.conditions[i]
		condition := e.conditions.of(c.Type)
		current := statusLabel(c.Status)
		for j, s := range conditionStatuses {
			value := 0.0
			if s.label == current {
				value = 1
			}
			e.gauge(conditionDesc, value, pairs.with(condition, statusPairs[j]))
		}
		e.gauge(conditionTransitionDesc, unixSeconds(c.LastTransitionTime.Time), pairs.with(condition, nil))
	}
	e.gauge(replicasDesiredDesc, float64(in.desired), pairs)
	e.gauge(replicasReadyDesc, float64(in.ready), pairs)
	e.counter(rollbacksDesc, float64(in.rollbacks), pairs)
	for _, claim := range in.claims {
		e.gauge(volumeClaimDesc, 1, pairs.with(nil, labelPair("persistentvolumeclaim", claim)))
	}
}
