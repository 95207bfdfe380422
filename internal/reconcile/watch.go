package reconcile

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// EnqueueInstance maps an object carrying the name label appName to the instance its instance
// label names, in its namespace. It links an owner to children that have no owner reference to it:
// pods its StatefulSet owns, or volumes and Secrets kept past its deletion.
func EnqueueInstance(appName string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []ctrl.Request {
		l := obj.GetLabels()
		if l[appsv1alpha1.LabelName] != appName || l[appsv1alpha1.LabelInstance] == "" {
			return nil
		}
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: l[appsv1alpha1.LabelInstance]}}}
	})
}
