package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// RequireInvalidSpecsRejected creates every object of InvalidObjects of kind in ns and requires
// the API server to refuse each as invalid, with its message.
func RequireInvalidSpecsRejected(t *testing.T, c client.Client, ns, kind string) {
	t.Helper()
	for _, tt := range InvalidObjects() {
		if tt.Kind != kind {
			continue
		}
		t.Run(tt.Test, func(t *testing.T) {
			err := c.Create(context.Background(), object(ns, tt.Kind, tt.Name, tt.Spec))
			if !apierrors.IsInvalid(err) || !Mentions(err.Error(), tt.Message) {
				t.Errorf("create = %v, want Invalid naming %q", err, tt.Message)
			}
		})
	}
}

// RequireInvalidUpdatesRejected creates the object of every InvalidUpdates row of kind in ns,
// then requires the API server to refuse its update as invalid, with its message.
func RequireInvalidUpdatesRejected(t *testing.T, c client.Client, ns, kind string) {
	t.Helper()
	for i, tt := range InvalidUpdates {
		if tt.Kind != kind {
			continue
		}
		t.Run(tt.Name, func(t *testing.T) {
			err := createAndPatch(t, c, object(ns, tt.Kind, fmt.Sprintf("update-%d", i), tt.Spec), tt.Patch)
			if !apierrors.IsInvalid(err) || !Mentions(err.Error(), tt.Message) {
				t.Errorf("update = %v, want Invalid naming %q", err, tt.Message)
			}
		})
	}
}

// RequireValidUpdatesAccepted creates the object of every ValidUpdates row of kind in ns, with
// the longest name the kind allows, and requires the API server to accept its update.
func RequireValidUpdatesAccepted(t *testing.T, c client.Client, ns, kind string) {
	t.Helper()
	for i, tt := range ValidUpdates {
		if tt.Kind != kind {
			continue
		}
		t.Run(tt.Name, func(t *testing.T) {
			suffix := fmt.Sprintf("-%d", i)
			name := strings.Repeat("a", MaxNameLengths[kind]-len(suffix)) + suffix
			if err := createAndPatch(t, c, object(ns, tt.Kind, name, tt.Spec), tt.Patch); err != nil {
				t.Errorf("update = %v, want it accepted", err)
			}
		})
	}
}

// Mentions tells whether message holds want, where an ellipsis in want stands for any text.
func Mentions(message, want string) bool {
	for part := range strings.SplitSeq(want, "…") {
		i := strings.Index(message, part)
		if i < 0 {
			return false
		}
		message = message[i+len(part):]
	}
	return true
}

func object(ns, kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": appsv1alpha1.GroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// createAndPatch creates obj, failing the test when the API server refuses it, and returns the
// error of a JSON merge patch of its spec.
func createAndPatch(t *testing.T, c client.Client, obj *unstructured.Unstructured, spec map[string]any) error {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create before the update: %v", err)
	}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
}
