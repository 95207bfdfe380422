package apply

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// appliedFieldsMatch is true when every field that fieldManager last applied, as the managed
// fields of the live object record them, is still set in want, and every value it owns whole (an
// atomic list or map) equals want's. A field the operator stopped setting still has its value in
// the live object, so only this comparison sees it; the apply that follows makes the API server
// drop it. The managed fields carry the list keys, so no schema is needed to find list entries.
func appliedFieldsMatch(have, want map[string]any, managed []metav1.ManagedFieldsEntry, fieldManager string) (bool, error) {
	owned, err := appliedFields(managed, fieldManager)
	if err != nil {
		return false, err
	}
	return ownedFieldsMatch(have, want, owned), nil
}

// ownedFieldsMatch is appliedFieldsMatch on the fields owned, as appliedFields reads them.
func ownedFieldsMatch(have, want map[string]any, owned *fieldpath.Set) bool {
	// The set's iterator cannot stop early, so the first mismatch ends the checks instead.
	match := true
	owned.Leaves().Iterate(func(path fieldpath.Path) {
		if match {
			match = wantedAsApplied(have, want, path)
		}
	})
	return match
}

// wantedAsApplied is true when want still sets the field at path and, where that field is a list
// or map the manager owns whole, to the value it has in have.
func wantedAsApplied(have, want map[string]any, path fieldpath.Path) bool {
	w, ok := valueAt(want, path)
	if !ok {
		return false
	}
	if !isContainer(w) {
		return true
	}
	h, _ := valueAt(have, path)
	return contains(h, w) && contains(w, h)
}

// appliedFields is the set of field paths fieldManager owns on the main resource through apply.
func appliedFields(managed []metav1.ManagedFieldsEntry, fieldManager string) (*fieldpath.Set, error) {
	owned := &fieldpath.Set{}
	for _, entry := range managed {
		if entry.Manager != fieldManager || entry.Operation != metav1.ManagedFieldsOperationApply ||
			entry.Subresource != "" || entry.FieldsV1 == nil {
			continue
		}
		fields := &fieldpath.Set{}
		if err := fields.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("managed fields of %s: %w", fieldManager, err)
		}
		owned = owned.Union(fields)
	}
	return owned, nil
}

// valueAt follows path through an unstructured object, matching list entries by the key, value
// or index the path element names.
func valueAt(obj any, path fieldpath.Path) (any, bool) {
	current := obj
	for _, element := range path {
		var ok bool
		switch {
		case element.FieldName != nil:
			m, _ := current.(map[string]any)
			current, ok = m[*element.FieldName]
		case element.Index != nil:
			list, _ := current.([]any)
			if ok = *element.Index >= 0 && *element.Index < len(list); ok {
				current = list[*element.Index]
			}
		default:
			current, ok = listEntry(current, element)
		}
		if !ok {
			return nil, false
		}
	}
	return current, true
}

// listEntry finds the entry of an associative list that a key or value path element selects.
func listEntry(list any, element fieldpath.PathElement) (any, bool) {
	entries, _ := list.([]any)
	for _, entry := range entries {
		if element.Value != nil && value.Equals(*element.Value, value.NewValueInterface(entry)) {
			return entry, true
		}
		if element.Key != nil && hasKey(entry, *element.Key) {
			return entry, true
		}
	}
	return nil, false
}

func hasKey(entry any, key value.FieldList) bool {
	m, ok := entry.(map[string]any)
	if !ok {
		return false
	}
	for _, field := range key {
		v, ok := m[field.Name]
		if !ok || !value.Equals(field.Value, value.NewValueInterface(v)) {
			return false
		}
	}
	return true
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}
