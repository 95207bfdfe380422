package operator

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// newSecretNamesCache is a cache of the names of every Secret in the watched namespaces, and of
// nothing else about them: a MySQL that references a Secret learns at once when it is created or
// changed, while no Secret's data or metadata beyond its name is held. The manager's own cache
// holds only the Secrets appkeeper manages. It watches the namespaces of managerCache and builds
// its informers as that cache does.
func newSecretNamesCache(mgr ctrl.Manager, managerCache cache.Options) (cache.Cache, error) {
	names, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: managerCache.DefaultNamespaces,
		DefaultTransform:  keepOnlyName,
		NewInformer:       managerCache.NewInformer,
	})
	if err != nil {
		return nil, fmt.Errorf("create the cache of Secret names: %w", err)
	}
	if err := mgr.Add(names); err != nil {
		return nil, fmt.Errorf("start the cache of Secret names: %w", err)
	}
	return names, nil
}

// keepOnlyName drops everything of a Secret's metadata but what identifies it.
func keepOnlyName(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.ObjectMeta = metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		}
	}
	return obj, nil
}
