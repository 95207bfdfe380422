package testutil

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Health is the verdict kstatus, the library Flux and the cli-utils applier judge health with,
// gives obj as the API server has it now: Current, InProgress, Failed or Terminating, with
// kstatus's message.
func Health(ctx context.Context, c client.Client, obj client.Object) (*status.Result, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, err
	}
	return status.Compute(u)
}

// RequireHealth fails the test unless kstatus gives obj the verdict want now.
func RequireHealth(t *testing.T, c client.Client, obj client.Object, want status.Status) {
	t.Helper()
	if err := healthIs(context.Background(), c, obj, want); err != nil {
		t.Fatal(err)
	}
}

// WaitForHealth waits until kstatus gives obj the verdict want.
func WaitForHealth(t *testing.T, c client.Client, obj client.Object, want status.Status, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func(ctx context.Context) error { return healthIs(ctx, c, obj, want) })
}

func healthIs(ctx context.Context, c client.Client, obj client.Object, want status.Status) error {
	got, err := Health(ctx, c, obj)
	if err != nil {
		return err
	}
	if got.Status != want {
		return fmt.Errorf("kstatus says %s of %s/%s (%s), want %s", got.Status, obj.GetNamespace(), obj.GetName(), got.Message, want)
	}
	return nil
}
