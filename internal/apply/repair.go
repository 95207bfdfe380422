package apply

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// applyOver applies desired to live, which exists. A hand edit can leave list entries that another
// manager owns beside the ones applied again, which apply alone cannot remove: a Service port
// renumbered keeps its name, and two ports of one name are invalid. Such an object is repaired with
// a patch, then applied again, so that the operator's applied entry in the managed fields holds
// every field once more and the next pass finds nothing to do.
func applyOver(ctx context.Context, c kube.Client, live client.Object, desired runtime.ApplyConfiguration) error {
	applyErr := c.Apply(ctx, desired, client.FieldOwner(c.FieldOwner), client.ForceOwnership)
	if !apierrors.IsInvalid(applyErr) {
		return applyErr
	}
	repaired, err := patchToDesired(ctx, c, live, desired)
	if err != nil {
		return fmt.Errorf("%w; the repair failed too: %w", applyErr, err)
	}
	if !repaired {
		// live holds every field desired sets: desired itself is invalid.
		return applyErr
	}
	return c.Apply(ctx, desired, client.FieldOwner(c.FieldOwner), client.ForceOwnership)
}

// patchToDesired writes, as one JSON merge patch, every field of desired that live lacks or holds
// otherwise, and tells whether there was any. A merge patch replaces a list whole, dropping the
// entries that apply left; it carries no resourceVersion, so another writer's changes cannot make
// it conflict.
func patchToDesired(ctx context.Context, c kube.Client, live client.Object, desired runtime.ApplyConfiguration) (bool, error) {
	have, err := toMap(live)
	if err != nil {
		return false, err
	}
	want, err := toMap(desired)
	if err != nil {
		return false, err
	}
	missing := missingFields(have, want)
	if len(missing) == 0 {
		return false, nil
	}
	patch, err := json.Marshal(missing)
	if err != nil {
		return false, err
	}
	patched := live.DeepCopyObject().(client.Object)
	if err := c.Patch(ctx, patched, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(c.FieldOwner)); err != nil {
		return false, err
	}
	return true, dropUpdateEntry(ctx, c, patched)
}

// missingFields is the merge patch that gives have every field of want: the maps are merged key by
// key, and any other value of want that have does not hold, a list included, is set whole.
func missingFields(have, want map[string]any) map[string]any {
	patch := map[string]any{}
	for k, w := range want {
		wantMap, isMap := w.(map[string]any)
		haveMap, hasMap := have[k].(map[string]any)
		switch {
		case isMap && hasMap:
			if nested := missingFields(haveMap, wantMap); len(nested) > 0 {
				patch[k] = nested
			}
		case !contains(have[k], w):
			patch[k] = w
		}
	}
	return patch
}

// dropUpdateEntry removes from patched, as the API server answered the patch, the managed-fields
// entry that the patch recorded under the operator's field manager. Left in place, it would co-own
// the fields it wrote beside the applied entry, so that a field the operator stops setting would
// never be removed. The entry is named by its index, which the patch tests first: when another
// writer moved it meanwhile, the test fails and the entry stays, as harmless as it was before.
func dropUpdateEntry(ctx context.Context, c kube.Client, patched client.Object) error {
	for i, entry := range patched.GetManagedFields() {
		if entry.Manager != c.FieldOwner || entry.Operation != metav1.ManagedFieldsOperationUpdate || entry.Subresource != "" {
			continue
		}
		at := fmt.Sprintf("/metadata/managedFields/%d", i)
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": at + "/manager", "value": entry.Manager},
			{"op": "test", "path": at + "/operation", "value": entry.Operation},
			{"op": "remove", "path": at},
		})
		if err != nil {
			return err
		}
		err = c.Patch(ctx, patched, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(c.FieldOwner))
		if apierrors.IsInvalid(err) {
			return nil
		}
		return err
	}
	return nil
}
