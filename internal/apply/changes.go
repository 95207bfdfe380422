package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// maxLoggedFields bounds the field paths a log line names; the count of the others follows them.
const maxLoggedFields = 5

// fieldChange is a field whose value differs between what the operator last applied to a child and
// what it wants now.
type fieldChange struct {
	// path names the field: spec.ports, spec.template.spec.containers[nginx].image.
	path string
	// taken is true when the operator's last apply no longer holds the field: another writer
	// changed or removed it, so that the apply restores it.
	taken bool
}

// changedFields lists the fields whose values differ between applied, what the operator last
// applied, and desired, in order; none when they hold the same. Maps are compared key by key, and
// lists of one length entry by entry, an entry named by its name field where it has one; a list
// whose length changed is one change.
func changedFields(applied, desired any) ([]fieldChange, error) {
	rawApplied, err := json.Marshal(applied)
	if err != nil {
		return nil, fmt.Errorf("marshal %T: %w", applied, err)
	}
	rawDesired, err := json.Marshal(desired)
	if err != nil {
		return nil, fmt.Errorf("marshal %T: %w", desired, err)
	}
	// Serialized apply configurations sort map keys and normalize quantities: equal bytes, the
	// case of nearly every pass, need no walk.
	if bytes.Equal(rawApplied, rawDesired) {
		return nil, nil
	}
	var a, d map[string]any
	if err := json.Unmarshal(rawApplied, &a); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(rawDesired, &d); err != nil {
		return nil, err
	}
	var changes []fieldChange
	diff("", a, d, &changes)
	return changes, nil
}

func diff(path string, applied, desired any, changes *[]fieldChange) {
	if reflect.DeepEqual(applied, desired) {
		return
	}
	switch d := desired.(type) {
	case map[string]any:
		if a, ok := applied.(map[string]any); ok {
			keys := make([]string, 0, len(a)+len(d))
			for k := range a {
				keys = append(keys, k)
			}
			for k := range d {
				if _, both := a[k]; !both {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				diff(joinPath(path, k), a[k], d[k], changes)
			}
			return
		}
	case []any:
		if a, ok := applied.([]any); ok && len(a) == len(d) {
			for i := range d {
				diff(path+"["+entryName(a[i], d[i], i)+"]", a[i], d[i], changes)
			}
			return
		}
	}
	*changes = append(*changes, fieldChange{path: path, taken: applied == nil})
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// entryName is the name both list entries carry, or else their index.
func entryName(applied, desired any, index int) string {
	a, _ := applied.(map[string]any)
	d, _ := desired.(map[string]any)
	if name, ok := d["name"].(string); ok && name != "" && a["name"] == name {
		return name
	}
	return strconv.Itoa(index)
}

// logChange tells, once per write, which child the operator created (changes nil) or changed, and
// which fields it wrote: their paths, never their values, which may be secret. A change that only
// puts back fields another writer took is a restore.
func logChange(ctx context.Context, kind string, key client.ObjectKey, changes []fieldChange) {
	logger := log.FromContext(ctx).WithValues("kind", kind, "child", key.String())
	if changes == nil {
		logger.Info("created child")
		return
	}
	message := "restored child"
	paths := make([]string, 0, len(changes))
	for _, change := range changes {
		if !change.taken {
			message = "updated child"
		}
		paths = append(paths, change.path)
	}
	if len(paths) > maxLoggedFields {
		logger.Info(message, "fields", paths[:maxLoggedFields], "otherFields", len(paths)-maxLoggedFields)
		return
	}
	logger.Info(message, "fields", paths)
}
