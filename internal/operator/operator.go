// Package operator assembles the manager: its options and flags, a cache that holds only what
// appkeeper manages, and one controller per kind.
package operator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apiserverwait"
	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/internal/backupjob"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/metrics"
	"github.com/appkeeper/appkeeper/internal/metricsauth"
	"github.com/appkeeper/appkeeper/internal/podmonitor"
)

// Name is the manager's name in events and the leader election lock; each controller writes
// under a field manager of its own (kube.NewClient).
const Name = "appkeeper"

// Leader election holds a Lease in the operator's own namespace and records events there when the
// lease changes hands; nothing else needs rights on Leases or core Events.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=appkeeper-system,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups=core,namespace=appkeeper-system,resources=events,verbs=create;patch

// The secure metrics endpoint authenticates and authorizes its clients through the API server.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Options configure the manager.
type Options struct {
	MetricsAddr   string
	SecureMetrics bool
	// MetricsCertDir holds tls.crt and tls.key, which the metrics endpoint serves and reloads when
	// they change; when empty, the manager signs a certificate itself at start.
	MetricsCertDir          string
	ProbeAddr               string
	PprofAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string
	Namespaces              string
	QPS                     float64
	Burst                   int
	MaxConcurrentReconciles int
	// BackupImage is an image holding this binary at /appkeeper: the backup Jobs run its backup
	// subcommands. In a cluster it is the operator's own image.
	BackupImage string
}

// DefaultOptions are the options of an operator run in-process beside a local cluster: no
// listeners, no leader election.
func DefaultOptions() Options {
	return Options{MetricsAddr: "0", ProbeAddr: "0", QPS: 1000, Burst: 2000, MaxConcurrentReconciles: 16,
		BackupImage: os.Getenv(backup.EnvImage)}
}

// BindFlags registers the manager's flags on fs, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, `address of the metrics endpoint, e.g. ":8443"; "0" disables it`)
	fs.BoolVar(&o.SecureMetrics, "metrics-secure", o.SecureMetrics, "serve metrics over HTTPS, only to clients the API server authenticates and authorizes")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir, "directory holding tls.crt and tls.key for the metrics endpoint, reloaded when they change; empty: a certificate the manager signs itself at start")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, `address of /healthz and /readyz, e.g. ":8081"; "0" disables them`)
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", o.PprofAddr, `address of the pprof endpoint; empty or "0" disables it`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader so that only one replica reconciles at a time")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election lease; defaults to the pod's namespace")
	fs.StringVar(&o.Namespaces, "namespaces", o.Namespaces, "comma-separated namespaces to watch; empty watches all")
	fs.Float64Var(&o.QPS, "kube-api-qps", o.QPS, "sustained queries per second to the API server")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "burst of queries to the API server")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", o.MaxConcurrentReconciles, "reconciles run at once per kind")
	fs.StringVar(&o.BackupImage, "backup-image", o.BackupImage, "image holding this binary at /appkeeper, which the backup Jobs run; defaults to $"+backup.EnvImage)
}

// Scheme knows the built-in kinds and appkeeper's.
func Scheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	return scheme
}

// managedLabel selects the objects appkeeper manages.
var managedLabel = labels.SelectorFromSet(labels.Set{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue})

// managedObjects are the child kinds the operator watches; the cache holds only those labelled as
// managed by appkeeper, so unrelated objects in the cluster cost it no memory.
func managedObjects() map[client.Object]cache.ByObject {
	managed := cache.ByObject{Label: managedLabel}
	return map[client.Object]cache.ByObject{
		&appsv1.Deployment{}:  managed,
		&appsv1.StatefulSet{}: managed,
		&corev1.Service{}:     managed,
		// Every kind reads its pods' status: what keeps them from running, for Degraded. Pods of
		// other applications are not held at all.
		&corev1.Pod{}: {Label: managed.Label, Transform: podMetadataAndStatus},
		// Only the Secrets appkeeper generates: a Secret a user references is read from the API
		// server when needed, so the operator holds no copy of the cluster's other secrets.
		&corev1.Secret{}:                managed,
		&corev1.ConfigMap{}:             managed,
		&corev1.PersistentVolumeClaim{}: managed,
		&batchv1.Job{}:                  managed,
		&policyv1.PodDisruptionBudget{}: managed,
		// Every node, of which only whether it takes new pods and whether its kubelet reports: a
		// MySQL cluster leaves a cordoned node before a drain evicts its primary, and pods that
		// hold no data leave a lost node.
		&corev1.Node{}: {Transform: nodeSchedulingAndReadiness},
	}
}

// nodeSchedulingAndReadiness keeps of a cached node its name, whether it is cordoned and its Ready
// condition: the rest of its status (images, other conditions, addresses) is most of its size.
func nodeSchedulingAndReadiness(obj any) (any, error) {
	if node, ok := obj.(*corev1.Node); ok {
		var ready []corev1.NodeCondition
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = append(ready, c)
			}
		}
		*node = corev1.Node{
			TypeMeta:   node.TypeMeta,
			ObjectMeta: metav1.ObjectMeta{Name: node.Name, UID: node.UID, ResourceVersion: node.ResourceVersion},
			Spec:       corev1.NodeSpec{Unschedulable: node.Spec.Unschedulable},
			Status:     corev1.NodeStatus{Conditions: ready},
		}
	}
	return obj, nil
}

// podMetadataAndStatus keeps of a cached pod its metadata and status, and of its spec only the node
// and what tells why a container keeps ending (its containers' memory limits and probe timings):
// the controllers judge pods by labels, annotations, owners and status, and the spec (its
// containers, volumes and tolerations) is most of a pod's size. Read a pod from the API server when
// the rest of its spec matters.
func podMetadataAndStatus(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.Spec = conditions.CrashCauseSpec(pod.Spec)
	}
	return keepOwnManagedFields(obj)
}

// metricsServer serves the metrics endpoint. A certificate directory given without its files is an
// error: controller-runtime would fall back to a certificate nobody can verify without a word.
func (o *Options) metricsServer() (metricsserver.Options, error) {
	server := metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: o.SecureMetrics}
	if o.SecureMetrics {
		server.FilterProvider = metricsauth.NewFilter
	}
	if o.MetricsCertDir == "" {
		return server, nil
	}
	if !o.SecureMetrics {
		return server, errors.New("--metrics-cert-dir needs --metrics-secure: a certificate is only served over HTTPS")
	}
	for _, name := range []string{"tls.crt", "tls.key"} {
		if _, err := os.Stat(filepath.Join(o.MetricsCertDir, name)); err != nil {
			return server, fmt.Errorf("--metrics-cert-dir: %w", err)
		}
	}
	server.CertDir = o.MetricsCertDir
	return server, nil
}

// NewManager builds the manager with every controller registered.
func NewManager(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(o.QPS), o.Burst
	metricsServer, err := o.metricsServer()
	if err != nil {
		return nil, err
	}
	podMonitorsAtStart, err := podmonitor.Detect(cfg, ctrl.Log.WithName("setup"))
	if err != nil {
		return nil, err
	}
	cacheOptions, err := newCacheOptions(cfg, o.Namespaces)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        Scheme(),
		Metrics:                       metricsServer,
		HealthProbeBindAddress:        o.ProbeAddr,
		PprofBindAddress:              o.PprofAddr,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              "appkeeper.apps.appkeeper.dev",
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOptions,
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := kube.IndexPodsByInstance(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return nil, fmt.Errorf("index pods: %w", err)
	}
	if err := backupjob.IndexBackupsByMySQL(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	podMonitors := podmonitor.NewKeeper(mgr, podMonitorsAtStart)
	if err := addControllers(mgr, o, cacheOptions, podMonitors); err != nil {
		return nil, err
	}
	if err := followPodMonitorKind(mgr, cacheOptions, podMonitors); err != nil {
		return nil, err
	}
	if err := forgetDeletedStatus(mgr); err != nil {
		return nil, err
	}
	if err := metrics.Register(mgr); err != nil {
		return nil, err
	}
	return mgr, nil
}

// newCacheOptions configure the manager's cache: the managed objects of the namespaces listed in
// namespaces (all when empty), with informers that wait out an outage of the API server instead of
// backing off through it, so that the operator acts on changes as soon as the API server is back.
func newCacheOptions(cfg *rest.Config, namespaces string) (cache.Options, error) {
	outage, err := apiserverwait.New(cfg, ctrl.Log.WithName("apiserver"))
	if err != nil {
		return cache.Options{}, err
	}
	options := cache.Options{
		ByObject: managedObjects(), DefaultTransform: keepOwnManagedFields, NewInformer: outage.NewInformer,
	}
	// Its CRD tells the operator when prometheus-operator's PodMonitor comes or goes.
	options.ByObject[podMonitorCRD()] = podMonitorCRDOnly()
	if namespaces != "" {
		options.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(namespaces, ",") {
			options.DefaultNamespaces[strings.TrimSpace(ns)] = cache.Config{}
		}
	}
	return options, nil
}

// keepOwnManagedFields drops from cached objects the managed-fields entries of every other field
// manager: they are most of an object's metadata, and the operator only ever reads its own entry,
// to tell whether an apply would change anything.
func keepOwnManagedFields(obj any) (any, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil //nolint:nilerr // a tombstone or other non-object passes unchanged
	}
	entries := accessor.GetManagedFields()
	kept := entries[:0]
	for _, e := range entries {
		if kube.IsOperatorFieldOwner(e.Manager) && e.Operation == metav1.ManagedFieldsOperationApply {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	accessor.SetManagedFields(kept)
	return obj, nil
}
