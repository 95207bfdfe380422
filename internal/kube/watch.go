package kube

import (
	"context"
	"strings"

	"k8s.io/client-go/util/workqueue"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
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

// EnqueueOnDeleteByChildName maps a deleted object to the resources whose child of that name it
// could have been: the resource named like it and, for each of suffixes it ends with, the resource
// named like it without the suffix. A resource that reported a name conflict with another
// resource's child takes the name at once when that child goes.
func EnqueueOnDeleteByChildName(suffixes ...string) handler.EventHandler {
	return handler.Funcs{DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
		name := e.Object.GetName()
		q.Add(ctrl.Request{NamespacedName: client.ObjectKey{Namespace: e.Object.GetNamespace(), Name: name}})
		for _, suffix := range suffixes {
			if owner, ok := strings.CutSuffix(name, suffix); ok && owner != "" {
				q.Add(ctrl.Request{NamespacedName: client.ObjectKey{Namespace: e.Object.GetNamespace(), Name: owner}})
			}
		}
	}}
}
