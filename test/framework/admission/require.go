package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/localcluster"
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

// Reconciles is how many passes the named controller of the operator running in this process has
// run so far, as controller-runtime counts them.
func Reconciles(t *testing.T, controller string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, family := range families {
		if family.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "controller" && label.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// SettledReconciles is Reconciles once the count has not moved for a second: the passes that the
// controller's own last writes cause (its status write is an event too) are over.
func SettledReconciles(t *testing.T, controller string) float64 {
	t.Helper()
	last := Reconciles(t, controller)
	Eventually(t, 30*time.Second, func(context.Context) error {
		time.Sleep(time.Second)
		now := Reconciles(t, controller)
		if now != last {
			last = now
			return fmt.Errorf("%s still passing", controller)
		}
		return nil
	})
	return last
}
