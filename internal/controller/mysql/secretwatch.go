package mysql

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// referencedSecretWatch maps a Secret to the MySQLs that reference it. It starts the first time a
// MySQL references a Secret: the cache of Secret names it needs would otherwise cost an operator
// whose MySQLs all generate their credentials memory for every Secret of the cluster.
type referencedSecretWatch struct {
	mu      sync.Mutex
	names   cache.Cache
	started bool
	// newNames makes the cache of Secret names; nil leaves the watch off.
	newNames func() (cache.Cache, error)
	ctl      controller.Controller
	mapFunc  handler.TypedMapFunc[*metav1.PartialObjectMetadata, ctrl.Request]
}

// ensure starts the watch unless it runs already. A Secret created before the watch starts is in
// the cache's first list, which reports it like a creation.
func (w *referencedSecretWatch) ensure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started || w.newNames == nil || w.ctl == nil {
		return nil
	}
	if w.names == nil {
		names, err := w.newNames()
		if err != nil {
			return err
		}
		w.names = names
	}
	secret := &metav1.PartialObjectMetadata{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := w.ctl.Watch(source.Kind(w.names, secret, handler.TypedEnqueueRequestsFromMapFunc(w.mapFunc))); err != nil {
		return err
	}
	w.started = true
	return nil
}
