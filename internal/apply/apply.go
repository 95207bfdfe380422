package apply

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// Result tells what an apply did, so that the caller can emit the right Event.
type Result int

const (
	// Unchanged means the live object already held everything the operator wants; nothing was sent.
	Unchanged Result = iota
	// Created means the object did not exist and was created.
	Created
	// Updated means the object existed and the operator's fields were restored or changed.
	Updated
)

// Extractor returns the fields of live that a field manager last applied; client-go generates one
// per kind (appsv1ac.ExtractDeployment, corev1ac.ExtractService, ...).
type Extractor[T client.Object, AC runtime.ApplyConfiguration] func(live T, fieldManager string) (AC, error)

// Child makes owner's child named name, in owner's namespace, match desired with server-side
// apply, forcing ownership of the fields the controller sets so that a hand edit of any of them is
// undone. An object of that name that owner does not control is left untouched and reported as a
// NameConflictError. Child compares desired with what the controller last applied to the live
// object (readOrCreate) and sends nothing when they match, so an idle operator makes no writes.
// live is left holding the object as the API server has it after the call, so that status
// computed from it already reflects the change; before is a copy of it from before the change,
// nil when it was created. Each creation or change is logged once, at info, with the paths of the
// fields that changed.
func Child[T client.Object, AC runtime.ApplyConfiguration](
	ctx context.Context, c kube.Client, owner client.Object, name string, live T, desired AC, extract Extractor[T, AC],
) (result Result, before T, err error) {
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: name}
	created, err := readOrCreate(ctx, c, key, live, func() any { return desired })
	switch {
	case err != nil:
		return Unchanged, before, err
	case created:
		return Created, before, nil
	}
	return over(ctx, c, owner, key, live, desired, extract)
}

// over applies desired as Child does, to live, which exists and has just been read.
func over[T client.Object, AC runtime.ApplyConfiguration](
	ctx context.Context, c kube.Client, owner client.Object, key client.ObjectKey, live T, desired AC, extract Extractor[T, AC],
) (result Result, before T, err error) {
	if hasLegacyApplyEntry(live.GetManagedFields()) {
		stale := live.DeepCopyObject().(client.Object)
		defer func() {
			if err == nil {
				err = dropLegacyFieldOwner(ctx, c, stale)
			}
		}()
	}
	if err := checkOwnership(c, owner, live); err != nil {
		return Unchanged, before, err
	}
	before = live.DeepCopyObject().(T)
	if held, err := holdsDesired(live, desired, c.FieldOwner); err != nil || held {
		return Unchanged, before, err
	}
	applied, err := extract(live, c.FieldOwner)
	if err != nil {
		return Unchanged, before, fmt.Errorf("extract %T %s: %w", live, key, err)
	}
	changes, err := changedFields(applied, desired)
	if err != nil || len(changes) == 0 {
		return Unchanged, before, err
	}
	if err := applyOver(ctx, c, live, desired); err != nil {
		return Unchanged, before, fmt.Errorf("apply %T %s: %w", live, key, err)
	}
	logChange(ctx, kindOf(c, live), key, changes)
	return Updated, before, decodeApplied(desired, live, key)
}

// decodeApplied leaves live holding the object as the API server answered the apply, which the
// client decoded into desired.
func decodeApplied(desired any, live client.Object, key client.ObjectKey) error {
	raw, err := json.Marshal(desired)
	if err != nil {
		return fmt.Errorf("marshal %T: %w", desired, err)
	}
	if err := json.Unmarshal(raw, live); err != nil {
		return fmt.Errorf("decode applied %T %s: %w", live, key, err)
	}
	return nil
}

func toMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal %T: %w", v, err)
	}
	out := map[string]any{}
	return out, json.Unmarshal(raw, &out)
}

// Ensure applies owner's child named name as Apply does, for a caller that needs neither the
// result nor the object before; the error names the owner.
func Ensure[T client.Object, AC runtime.ApplyConfiguration](
	ctx context.Context, c kube.Client, owner client.Object, name string, live T, desired AC, extract Extractor[T, AC],
) error {
	if _, _, err := Child(ctx, c, owner, name, live, desired, extract); err != nil {
		return fmt.Errorf("child of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	return nil
}

// holdsDesired is true when the operator has applied live before, live holds every field desired
// sets, with its value, and desired still sets every field the operator last applied there: then an
// apply would change nothing. Most passes end here; the check needs no schema, so it costs a
// fraction of extracting the applied fields, which the caller does only when it fails, to tell what
// changed. An object the operator created without apply, such as a generated Secret, is applied
// once, so that its fields are recorded as applied and a field dropped later goes.
func holdsDesired(live client.Object, desired any, fieldManager string) (bool, error) {
	owned, err := appliedFields(live.GetManagedFields(), fieldManager)
	if err != nil || owned.Empty() {
		return false, err
	}
	have, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return false, fmt.Errorf("convert %T: %w", live, err)
	}
	want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(desired)
	if err != nil {
		return false, fmt.Errorf("convert %T: %w", desired, err)
	}
	// A typed object, as the cache holds it, carries no apiVersion and kind.
	delete(want, "apiVersion")
	delete(want, "kind")
	return ownedFieldsMatch(have, want, owned) && contains(have, want), nil
}
