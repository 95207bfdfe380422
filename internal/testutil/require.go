package testutil

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/localcluster"
)

// RequireInvalidSpecsRejected creates every spec of InvalidSpecs for kind in ns and requires the API
// server to refuse each as invalid, with its message.
func RequireInvalidSpecsRejected(t *testing.T, c client.Client, ns, kind string) {
	t.Helper()
	for i, tt := range InvalidSpecs {
		if tt.Kind != kind {
			continue
		}
		t.Run(tt.Name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": appsv1alpha1.GroupVersion.String(), "kind": tt.Kind,
				"metadata": map[string]any{"name": fmt.Sprintf("bad-%d", i), "namespace": ns},
				"spec":     tt.Spec,
			}}
			err := c.Create(context.Background(), obj)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.Message) {
				t.Errorf("create = %v, want Invalid naming %q", err, tt.Message)
			}
		})
	}
}

// RequireUnchanged requires versions, the resourceVersions of some objects, to stay the same for
// five seconds: nothing wrote to them. It first lets a second pass, for the status write that
// readiness causes to settle.
func RequireUnchanged(t *testing.T, what string, versions func() string) {
	t.Helper()
	time.Sleep(time.Second)
	before := versions()
	for range 5 {
		time.Sleep(time.Second)
		if after := versions(); after != before {
			t.Fatalf("%s changed: %s -> %s", what, before, after)
		}
	}
}

// NewNamespace creates a namespace named after prefix, for one test's objects.
func NewNamespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// FreePort is a loopback TCP port nothing listens on, for a server a test starts.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
