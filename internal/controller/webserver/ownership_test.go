package webserver_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// TestServiceMadeByHandIsNotAdopted checks that a WebServer whose Service name a person already
// uses writes nothing to that Service, says so, and takes the name once it is free.
func TestServiceMadeByHandIsNotAdopted(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	mine := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"team": "payments"}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "payments"},
			Ports:    []corev1.ServicePort{{Name: "api", Port: 8443}},
		},
	}
	if err := k8s.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	createWebServer(t, ns, 1, "nginx:1.27")

	ws := waitDegraded(t, ns, appsv1alpha1.ReasonNameConflict)
	if msg := meta.FindStatusCondition(ws.Status.Conditions, appsv1alpha1.ConditionDegraded).Message; !strings.Contains(msg, "Service web") {
		t.Errorf("Degraded message %q does not name the Service in the way", msg)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventNameConflict)
	await.RequireUnchanged(t, "the hand-made Service", func() string {
		svc := get(t, ns, "web", &corev1.Service{})
		if len(svc.OwnerReferences) != 0 || svc.Labels[appsv1alpha1.LabelManagedBy] != "" {
			t.Fatalf("the hand-made Service was taken over: owners %v, labels %v", svc.OwnerReferences, svc.Labels)
		}
		return svc.ResourceVersion
	})
	// The Deployment, whose name is free, is the WebServer's as usual.
	if dep := get(t, ns, "web", &appsv1.Deployment{}); !metav1.IsControlledBy(dep, ws) {
		t.Errorf("the Deployment is controlled by %v", metav1.GetControllerOf(dep))
	}

	if err := k8s.Delete(ctx, mine); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		svc := &corev1.Service{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, svc); err != nil {
			return err
		}
		if !metav1.IsControlledBy(svc, ws) {
			return fmt.Errorf("the Service is controlled by %v", metav1.GetControllerOf(svc))
		}
		return nil
	})
	waitDegraded(t, ns, appsv1alpha1.ReasonAsExpected)
}

// TestEachControllerWritesUnderItsOwnFieldManager checks that managed fields tell which controller
// applied a child.
func TestEachControllerWritesUnderItsOwnFieldManager(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 1, "nginx:1.27")
	dep, svc := childrenExist(t, ns)
	for _, obj := range []client.Object{dep, svc} {
		if appliers := appliedBy(obj); !slices.Contains(appliers, "appkeeper-webserver") {
			t.Errorf("%T applied by %v, want appkeeper-webserver", obj, appliers)
		}
	}
}

// appliedBy lists the field managers that applied obj.
func appliedBy(obj client.Object) []string {
	var appliers []string
	for _, e := range obj.GetManagedFields() {
		if e.Operation == metav1.ManagedFieldsOperationApply {
			appliers = append(appliers, e.Manager)
		}
	}
	return appliers
}

// waitDegraded waits until the WebServer web reports Degraded with reason, True unless the reason
// is AsExpected.
func waitDegraded(t *testing.T, ns, reason string) *appsv1alpha1.WebServer {
	t.Helper()
	ws := &appsv1alpha1.WebServer{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ws); err != nil {
			return err
		}
		c := meta.FindStatusCondition(ws.Status.Conditions, appsv1alpha1.ConditionDegraded)
		if c == nil || c.Reason != reason || c.ObservedGeneration != ws.Generation {
			return fmt.Errorf("Degraded = %+v, want reason %s", c, reason)
		}
		return nil
	})
	return ws
}

// TestEarlierSharedFieldManagerIsDropped checks that the apply entry of the field manager all
// controllers shared in earlier versions is removed from a child, so that it cannot keep fields
// the operator no longer sets.
func TestEarlierSharedFieldManagerIsDropped(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 1, "nginx:1.27")
	childrenExist(t, ns)
	earlier := corev1ac.Service("web", ns).WithLabels(map[string]string{"set-by": "an-earlier-version"})
	if err := k8s.Apply(context.Background(), earlier, client.FieldOwner("appkeeper"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		svc := &corev1.Service{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, svc); err != nil {
			return err
		}
		if appliers := appliedBy(svc); slices.Contains(appliers, "appkeeper") || !slices.Contains(appliers, "appkeeper-webserver") {
			return fmt.Errorf("the Service is applied by %v, want appkeeper-webserver and not the earlier shared manager", appliers)
		}
		return nil
	})
}
