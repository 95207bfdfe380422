package apply

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/failure"
	"github.com/appkeeper/appkeeper/internal/kube"
)

// checkOwnership returns a NameConflictError unless live belongs to owner: owner is its controller,
// or it has no controller, appkeeper wrote it, and it names no other instance (every child's
// instance label is its owner's name), as a volume or Secret kept past a former owner of the same
// name does.
func checkOwnership(c kube.Client, owner, live client.Object) error {
	if ref := metav1.GetControllerOf(live); ref != nil {
		if ref.UID == owner.GetUID() {
			return nil
		}
		return conflict(c, owner, live, ref.Kind+" "+ref.Name)
	}
	instance, labelled := live.GetLabels()[appsv1alpha1.LabelInstance]
	if writtenByOperator(live) && (!labelled || instance == owner.GetName()) {
		return nil
	}
	return conflict(c, owner, live, "")
}

func conflict(c kube.Client, owner, live client.Object, controller string) error {
	return &failure.NameConflictError{
		Kind: kindOf(c, live), Name: live.GetName(), Controller: controller, Owner: kindOf(c, owner) + " " + owner.GetName(),
		Watched: live.GetLabels()[appsv1alpha1.LabelManagedBy] == appsv1alpha1.ManagedByValue,
	}
}

func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
