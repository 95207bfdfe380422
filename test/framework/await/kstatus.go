package await

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/appkeeper/appkeeper/config/argocd"
)

// The health checks of GitOps tools read the same status two ways: kstatus, on which Flux, kpt and
// the cli-utils applier build, and Argo CD through config/argocd/health.lua. RequireHealth and
// WaitForHealth hold both to the same verdict on the same object, as the API server has it:
// Argo CD's status for each kstatus verdict.
var argoCDVerdict = map[status.Status]string{
	status.CurrentStatus:     argocd.Healthy,
	status.InProgressStatus:  argocd.Progressing,
	status.FailedStatus:      argocd.Degraded,
	status.TerminatingStatus: argocd.Progressing,
}

// RequireHealth fails the test unless kstatus gives obj the verdict want now, and Argo CD the
// matching one.
func RequireHealth(t *testing.T, c client.Client, obj client.Object, want status.Status) {
	t.Helper()
	if err := healthIs(context.Background(), c, obj, want); err != nil {
		t.Fatal(err)
	}
}

// WaitForHealth waits until kstatus gives obj the verdict want, and Argo CD the matching one.
func WaitForHealth(t *testing.T, c client.Client, obj client.Object, want status.Status, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func(ctx context.Context) error { return healthIs(ctx, c, obj, want) })
}

// Health is kstatus's reading of obj as the API server has it now.
func Health(ctx context.Context, c client.Client, obj client.Object) (*status.Result, error) {
	u, err := live(ctx, c, obj)
	if err != nil {
		return nil, err
	}
	return status.Compute(u)
}

func healthIs(ctx context.Context, c client.Client, obj client.Object, want status.Status) error {
	u, err := live(ctx, c, obj)
	if err != nil {
		return err
	}
	got, err := status.Compute(u)
	if err != nil {
		return err
	}
	if got.Status != want {
		return fmt.Errorf("kstatus says %s of %s/%s (%s), want %s", got.Status, obj.GetNamespace(), obj.GetName(), got.Message, want)
	}
	return argoCDHealthIs(u, argoCDVerdict[want])
}

func argoCDHealthIs(u *unstructured.Unstructured, want string) error {
	got, err := argocd.Evaluate(u, argocd.Script)
	if err != nil {
		return fmt.Errorf("the health check for Argo CD fails on %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	if got.Status != want {
		return fmt.Errorf("with appkeeper's health check, Argo CD says %s of %s/%s (%s), want %s", got.Status, u.GetNamespace(), u.GetName(), got.Message, want)
	}
	return nil
}

// live is obj as the API server has it now, in the JSON form health checks read.
func live(ctx context.Context, c client.Client, obj client.Object) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, err
	}
	return u, nil
}
