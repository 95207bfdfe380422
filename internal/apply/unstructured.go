package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// Unstructured makes owner's child desired, of a kind the operator has no Go type for, match with
// server-side apply as Child does: nothing is sent while the live object holds what the operator
// last applied, and an object owner does not control is left alone and reported as a
// NameConflictError that names the child and its owner. live receives the object read before the
// apply, or the object created.
func Unstructured(ctx context.Context, c kube.Client, owner client.Object, live, desired *unstructured.Unstructured) (Result, error) {
	key := client.ObjectKeyFromObject(desired)
	created, err := readOrCreate(ctx, c, key, live, func() any { return desired })
	switch {
	case err != nil:
		return Unchanged, err
	case created:
		return Created, nil
	}
	if err := checkOwnership(c, owner, live); err != nil {
		return Unchanged, fmt.Errorf("%s of %s %s: %w", desired.GetKind(), kindOf(c, owner), key, err)
	}
	same, err := appliedFieldsMatch(live.Object, desired.Object, live.GetManagedFields(), c.FieldOwner)
	if err != nil || (same && contains(live.Object, desired.Object)) {
		return Unchanged, err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(c.FieldOwner), client.ForceOwnership); err != nil {
		return Unchanged, fmt.Errorf("apply %s %s: %w", desired.GetKind(), key, err)
	}
	return Updated, nil
}
