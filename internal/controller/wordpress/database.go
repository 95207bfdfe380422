package wordpress

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
)

// databaseChangedPredicate passes every creation and deletion of a MySQL and only the updates that
// change what a site reads of its database (siteVisibleChange): a MySQL writes its status several
// times while it starts, and most of those writes (its rollout, its replica counts, its other
// conditions) mean nothing to the site.
var databaseChangedPredicate = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	old, oldIsMySQL := e.ObjectOld.(*appsv1alpha1.MySQL)
	updated, updatedIsMySQL := e.ObjectNew.(*appsv1alpha1.MySQL)
	return !oldIsMySQL || !updatedIsMySQL || siteVisibleChange(old, updated)
}}

// siteVisibleChange tells whether updated differs from old in what a site reads of its database:
// the spec, deletion, the controller, the endpoint and the Available condition, whose message the
// site's DatabaseReady repeats.
func siteVisibleChange(old, updated *appsv1alpha1.MySQL) bool {
	return old.Generation != updated.Generation ||
		old.DeletionTimestamp.IsZero() != updated.DeletionTimestamp.IsZero() ||
		conditions.ControllerUID(old) != conditions.ControllerUID(updated) ||
		old.Status.Endpoint != updated.Status.Endpoint ||
		!sameCondition(meta.FindStatusCondition(old.Status.Conditions, appsv1alpha1.ConditionAvailable),
			meta.FindStatusCondition(updated.Status.Conditions, appsv1alpha1.ConditionAvailable))
}

func sameCondition(a, b *metav1.Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message && a.ObservedGeneration == b.ObservedGeneration
}
