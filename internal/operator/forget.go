package operator

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/statuspatch"
)

// forgetDeletedStatus drops what the status writes remember of an instance once it is deleted, so
// that the memory does not grow with every instance the cluster ever had.
func forgetDeletedStatus(mgr ctrl.Manager) error {
	kinds := []client.Object{
		&appsv1alpha1.WebServer{}, &appsv1alpha1.Memcached{}, &appsv1alpha1.PodSet{}, &appsv1alpha1.MySQL{},
		&appsv1alpha1.WordPress{}, &appsv1alpha1.MySQLBackup{}, &appsv1alpha1.WordPressBackup{},
	}
	for _, kind := range kinds {
		informer, err := mgr.GetCache().GetInformer(context.Background(), kind)
		if err != nil {
			return fmt.Errorf("informer of %T: %w", kind, err)
		}
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: forget}); err != nil {
			return fmt.Errorf("watch deletions of %T: %w", kind, err)
		}
	}
	return nil
}

func forget(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if accessor, err := meta.Accessor(obj); err == nil {
		statuspatch.Forget(accessor.GetUID())
	}
}
