package apply

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// Object makes live, an object of the operator's own API, hold every field desired sets, with
// server-side apply. Those kinds have no generated extractor, so the no-op check is that every
// field desired sets already has that value in live, and that every field the operator last
// applied is still in desired (else apply drops it): the API server's defaults and fields other
// managers set are left out of the comparison, as apply leaves them alone. desired's status is
// never sent. live is left holding the object as read before the apply, status included.
func Object(ctx context.Context, c kube.Client, desired, live client.Object) (Result, error) {
	key := client.ObjectKeyFromObject(desired)
	gvk, err := c.GroupVersionKindFor(desired)
	if err != nil {
		return Unchanged, err
	}
	want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return Unchanged, fmt.Errorf("convert %s %s: %w", gvk.Kind, key, err)
	}
	delete(want, "status")
	dropEmpty(want)
	if metadata, ok := want["metadata"].(map[string]any); ok {
		delete(metadata, "creationTimestamp")
	}
	result := Created
	err = c.Get(ctx, key, live)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return Unchanged, fmt.Errorf("get %s %s: %w", gvk.Kind, key, err)
	default:
		result = Updated
		have, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
		if err != nil {
			return Unchanged, fmt.Errorf("convert %s %s: %w", gvk.Kind, key, err)
		}
		if hasLegacyApplyEntry(live.GetManagedFields()) {
			if err := dropLegacyFieldOwner(ctx, c, live.DeepCopyObject().(client.Object)); err != nil {
				return Unchanged, err
			}
		}
		same, err := appliedFieldsMatch(have, want, live.GetManagedFields(), c.FieldOwner)
		if err != nil {
			return Unchanged, fmt.Errorf("compare %s %s: %w", gvk.Kind, key, err)
		}
		if same && contains(have, want) {
			return Unchanged, nil
		}
	}
	u := &unstructured.Unstructured{Object: want}
	u.SetGroupVersionKind(gvk)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(c.FieldOwner), client.ForceOwnership); err != nil {
		return Unchanged, fmt.Errorf("apply %s %s: %w", gvk.Kind, key, err)
	}

	return result, nil
}

// contains is true when every field set in want has the same value in have. Lists must match
// entry by entry, and an empty map or list in want matches an absent field.
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, _ := have.(map[string]any)
		for k, wv := range w {
			hv, ok := h[k]
			if !ok {
				if isEmpty(wv) {
					continue
				}
				return false
			}
			if !contains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, _ := have.([]any)
		if len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(have, want)
	}
}

// dropEmpty removes the empty maps and lists from an object about to be applied, those that
// become empty included. An empty struct, such as resources with no limits, would otherwise be
// sent as {}: when the fields it held before are pruned, the API server leaves null in its place,
// which a CRD's schema rejects. Applying no field at all removes the old ones cleanly.
func dropEmpty(m map[string]any) {
	for k, v := range m {
		if child, ok := v.(map[string]any); ok {
			dropEmpty(child)
		}
		if isEmpty(v) && v != nil {
			delete(m, k)
		}
	}
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}
