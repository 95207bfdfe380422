package apply

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// hasLegacyApplyEntry is true when an object carries the apply entry of the field manager that
// every controller shared in earlier versions.
func hasLegacyApplyEntry(managed []metav1.ManagedFieldsEntry) bool {
	for _, e := range managed {
		if e.Manager == kube.LegacyFieldOwner && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// dropLegacyFieldOwner removes that entry from obj, once its controller applies it under a field
// manager of its own: left in place, the old entry would co-own every field, so that a field the
// operator stops setting would never be removed. The cache holds only the operator's own entries,
// so the others are read from the API server and written back as they are; the resourceVersion
// makes the write fail rather than lose an entry written meanwhile.
func dropLegacyFieldOwner(ctx context.Context, c kube.Client, obj client.Object) error {
	if err := c.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	var kept []metav1.ManagedFieldsEntry
	for _, e := range obj.GetManagedFields() {
		if e.Manager != kube.LegacyFieldOwner || e.Operation != metav1.ManagedFieldsOperationApply {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(obj.GetManagedFields()) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"managedFields": kept, "resourceVersion": obj.GetResourceVersion(),
	}})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(c.FieldOwner)); err != nil {
		return fmt.Errorf("drop the field manager %s of %s: %w", kube.LegacyFieldOwner, client.ObjectKeyFromObject(obj), client.IgnoreNotFound(err))
	}
	return nil
}
