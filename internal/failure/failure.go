package failure

import (
	"errors"
	"fmt"

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

// DropWatchedWaits returns err unless every error it joins is a NameConflictError whose object is Watched:
// those wait for the object's deletion, which the watches report, and a retry with backoff would
// only repeat the same reads. An idle operator then runs no pass for a resource that waits.
func DropWatchedWaits(err error) error {
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

// Reason is the Degraded reason for an error a pass returned: the reason the error gives
// itself (a method Reason), or ReconcileFailed.
func Reason(err error) string {
	var reasoned interface{ Reason() string }
	if errors.As(err, &reasoned) {
		return reasoned.Reason()
	}
	return appsv1alpha1.ReasonReconcileFailed
}
