package reconcile

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// NameConflictError says that an object the operator would create or apply for an owner exists
// and is not that owner's: another resource controls it, or a person or another tool made it. The
// operator writes nothing to it.
type NameConflictError struct {
	// Kind and Name of the object in the way.
	Kind, Name string
	// Controller is the kind and name of the object's controller, or empty when it has none.
	Controller string
	// Owner is the kind and name of the resource that wanted the object.
	Owner string
	// Watched is true when the operator's cache holds the object, so that its deletion starts a
	// pass of Owner at once, with no retry.
	Watched bool
}

func (e *NameConflictError) Error() string {
	if e.Controller == e.Owner {
		return fmt.Sprintf("%s %s still belongs to a deleted %s of the same name: it is made again once the garbage collector has removed it",
			e.Kind, e.Name, e.Owner)
	}
	held := "was not created by appkeeper for it"
	if e.Controller != "" {
		held = "is controlled by " + e.Controller
	}
	return fmt.Sprintf("%s %s already exists and %s, so %s leaves it alone: rename or delete one of them",
		e.Kind, e.Name, held, e.Owner)
}

// IsNameConflict is true when err is or wraps a NameConflictError that a person must resolve; a
// child left by a deleted resource of the same name goes by itself.
func IsNameConflict(err error) bool {
	var conflict *NameConflictError
	return errors.As(err, &conflict) && conflict.Controller != conflict.Owner
}

// Reason is the Degraded reason of a NameConflictError.
func (e *NameConflictError) Reason() string {
	if e.Controller == e.Owner {
		return appsv1alpha1.ReasonReconcileFailed
	}
	return appsv1alpha1.ReasonNameConflict
}

// InvalidSpecError says that the spec asks for what its children cannot do, in a way admission
// could not check; the message names the fields.
type InvalidSpecError struct{ Message string }

func (e *InvalidSpecError) Error() string { return e.Message }

// Reason is the Degraded reason of an InvalidSpecError.
func (e *InvalidSpecError) Reason() string { return appsv1alpha1.ReasonInvalidSpec }

// Retry returns err unless every error it joins is a NameConflictError whose object is Watched:
// those wait for the object's deletion, which the watches report, and a retry with backoff would
// only repeat the same reads. An idle operator then runs no pass for a resource that waits.
func Retry(err error) error {
	if err == nil || waitsForDeletion(err) {
		return nil
	}
	return err
}

func waitsForDeletion(err error) bool {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, inner := range joined.Unwrap() {
			if !waitsForDeletion(inner) {
				return false
			}
		}
		return true
	}
	var conflict *NameConflictError
	return errors.As(err, &conflict) && conflict.Watched
}

// ErrorReason is the Degraded reason for an error a pass returned: the reason the error gives
// itself (a method Reason), or ReconcileFailed.
func ErrorReason(err error) string {
	var reasoned interface{ Reason() string }
	if errors.As(err, &reasoned) {
		return reasoned.Reason()
	}
	return appsv1alpha1.ReasonReconcileFailed
}

// readLive reads the object at key into live: from the cache, or, when the cache misses, from the
// API server, since the cache holds only objects labelled as managed by appkeeper and lags behind
// writes. found is false when the object does not exist.
func readLive(ctx context.Context, c Client, key client.ObjectKey, live client.Object) (found bool, err error) {
	err = c.Get(ctx, key, live)
	if apierrors.IsNotFound(err) && c.APIReader != nil {
		err = c.APIReader.Get(ctx, key, live)
	}
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get %T %s: %w", live, key, err)
	}
	return true, nil
}

// checkOwnership returns a NameConflictError unless live belongs to owner: owner is its controller,
// or it has no controller, appkeeper wrote it, and it names no other instance (every child's
// instance label is its owner's name), as a volume or Secret kept past a former owner of the same
// name does.
func checkOwnership(c Client, owner, live client.Object) error {
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

func conflict(c Client, owner, live client.Object, controller string) error {
	return &NameConflictError{
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
