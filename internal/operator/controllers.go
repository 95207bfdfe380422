package operator

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/appkeeper/appkeeper/internal/controller/memcached"
	"github.com/appkeeper/appkeeper/internal/controller/mysql"
	"github.com/appkeeper/appkeeper/internal/controller/mysqlbackup"
	"github.com/appkeeper/appkeeper/internal/controller/podset"
	"github.com/appkeeper/appkeeper/internal/controller/webserver"
	"github.com/appkeeper/appkeeper/internal/controller/wordpress"
	"github.com/appkeeper/appkeeper/internal/controller/wordpressbackup"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/podmonitor"
)

// addControllers registers one controller per kind with mgr, whose cache is configured by
// cacheOptions; those of the monitored kinds keep their PodMonitors through podMonitors.
func addControllers(mgr ctrl.Manager, o Options, cacheOptions cache.Options, podMonitors *podmonitor.Keeper) error {
	options := controller.Options{MaxConcurrentReconciles: o.MaxConcurrentReconciles}
	// Every controller learns from the others' refused writes that a namespace is being deleted.
	terminating := kube.NewTerminatingNamespaces()
	recorder := terminating.Recorder(mgr.GetEventRecorder(Name))
	if err := (&webserver.Reconciler{
		Client:      kube.NewClient(mgr, "webserver", terminating),
		Recorder:    recorder,
		PodMonitors: podMonitors,
	}).SetupWithManager(mgr, options); err != nil {
		return fmt.Errorf("set up the WebServer controller: %w", err)
	}
	if err := (&memcached.Reconciler{
		Client:      kube.NewClient(mgr, "memcached", terminating),
		Recorder:    recorder,
		PodMonitors: podMonitors,
	}).SetupWithManager(mgr, options); err != nil {
		return fmt.Errorf("set up the Memcached controller: %w", err)
	}
	if err := (&podset.Reconciler{
		Client:   kube.NewClient(mgr, "podset", terminating),
		Recorder: recorder,
	}).SetupWithManager(mgr, options); err != nil {
		return fmt.Errorf("set up the PodSet controller: %w", err)
	}
	if err := (&mysqlbackup.Reconciler{
		Client:      kube.NewClient(mgr, "mysqlbackup", terminating),
		Recorder:    recorder,
		BackupImage: o.BackupImage,
	}).SetupWithManager(mgr, options); err != nil {
		return fmt.Errorf("set up the MySQLBackup controller: %w", err)
	}
	if err := (&wordpressbackup.Reconciler{
		Client:      kube.NewClient(mgr, "wordpressbackup", terminating),
		Recorder:    recorder,
		BackupImage: o.BackupImage,
	}).SetupWithManager(mgr, options); err != nil {
		return fmt.Errorf("set up the WordPressBackup controller: %w", err)
	}
	if err := (&mysql.Reconciler{
		Client:      kube.NewClient(mgr, "mysql", terminating),
		Recorder:    recorder,
		BackupImage: o.BackupImage,
		PodMonitors: podMonitors,
		NewSecretNames: func() (cache.Cache, error) {
			return newSecretNamesCache(mgr, cacheOptions)
		},
	}).SetupWithManager(mgr, options); err != nil {
		return fmt.Errorf("set up the MySQL controller: %w", err)
	}
	if err := (&wordpress.Reconciler{
		Client:      kube.NewClient(mgr, "wordpress", terminating),
		Recorder:    recorder,
		BackupImage: o.BackupImage,
	}).SetupWithManager(mgr, options); err != nil {
		return fmt.Errorf("set up the WordPress controller: %w", err)
	}
	return nil
}
