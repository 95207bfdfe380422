package webserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/admission"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

const timeout = 20 * time.Second

// newNamespace gives each test a namespace of its own.
func newNamespace(t *testing.T) string {
	t.Helper()
	return testcluster.NewNamespace(t, k8s, "ws")
}

func createWebServer(t *testing.T, ns string, replicas int32, image string) *appsv1alpha1.WebServer {
	t.Helper()
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To(replicas), Image: image},
	}
	if err := k8s.Create(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

func get[T client.Object](t *testing.T, ns, name string, obj T) T {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// childrenExist waits for the WebServer's Deployment and Service and returns them.
func childrenExist(t *testing.T, ns string) (*appsv1.Deployment, *corev1.Service) {
	t.Helper()
	dep, svc := &appsv1.Deployment{}, &corev1.Service{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep); err != nil {
			return err
		}
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, svc)
	})
	return dep, svc
}

// markDeploymentReady writes the status the Deployment controller would write once every pod of the
// current template is available.
func markDeploymentReady(t *testing.T, ns string) {
	t.Helper()
	kubesim.MarkDeploymentReady(t, k8s, ns, "web", timeout)
}

func TestChildrenAreOwnedAndStatusFollowsThem(t *testing.T) {
	ns := newNamespace(t)
	ws := createWebServer(t, ns, 3, "nginx:1.23.1")
	dep, svc := childrenExist(t, ns)
	for _, child := range []client.Object{dep, svc} {
		owner := metav1.GetControllerOf(child)
		if owner == nil || owner.UID != ws.UID || owner.Kind != "WebServer" {
			t.Errorf("%T owner = %+v, want the WebServer", child, owner)
		}
	}
	if *dep.Spec.Replicas != 3 || dep.Spec.Template.Spec.Containers[0].Image != "nginx:1.23.1" {
		t.Errorf("deployment replicas/image = %d/%s", *dep.Spec.Replicas, dep.Spec.Template.Spec.Containers[0].Image)
	}
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse)
	wantCreatedEvent(t, ns, "created Deployment web with 3 replicas of nginx:1.23.1, PodDisruptionBudget web and Service web")

	markDeploymentReady(t, ns)
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	waitCondition(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse)
	got := get(t, ns, "web", &appsv1alpha1.WebServer{})
	if got.Status.Image != "nginx:1.23.1" || got.Status.ReadyReplicas != 3 || got.Status.Selector == "" {
		t.Errorf("status = %+v", got.Status)
	}

	// A new image: Progressing until the Deployment reports the new template rolled out.
	patchSpec(t, ns, `{"spec":{"image":"nginx:1.23.0"}}`)
	waitCondition(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue)
	if got := get(t, ns, "web", &appsv1alpha1.WebServer{}); got.Status.Image != "nginx:1.23.1" {
		t.Errorf("status.image = %s before the rollout completed", got.Status.Image)
	}
	markDeploymentReady(t, ns)
	await.Eventually(t, timeout, func(context.Context) error {
		got := get(t, ns, "web", &appsv1alpha1.WebServer{})
		if got.Status.Image != "nginx:1.23.0" {
			return fmt.Errorf("status.image = %s", got.Status.Image)
		}
		return await.ConditionIs(got.Status.Conditions, got.Generation, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse)
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventCreated, appsv1alpha1.EventUpgrading, appsv1alpha1.EventUpgraded)
}

func TestScaleSubresource(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 1, "nginx:1.23.1")
	childrenExist(t, ns)
	ws := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 4}}
	if err := k8s.SubResource("scale").Update(context.Background(), ws, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		dep := get(t, ns, "web", &appsv1.Deployment{})
		if *dep.Spec.Replicas != 4 {
			return fmt.Errorf("deployment replicas = %d", *dep.Spec.Replicas)
		}
		return nil
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventScaled)
}

func TestDriftIsRestored(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 2, "nginx:1.23.1")
	dep, svc := childrenExist(t, ns)

	dep.Spec.Replicas = ptr.To[int32](7)
	dep.Spec.Template.Spec.Containers[0].Image = "evil:latest"
	dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot = ptr.To(false)
	delete(dep.Labels, appsv1alpha1.LabelManagedBy)
	if err := k8s.Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports[0].Port = 9999
	svc.Spec.Selector = map[string]string{"app": "other"}
	if err := k8s.Update(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		dep := get(t, ns, "web", &appsv1.Deployment{})
		pod := dep.Spec.Template.Spec
		if *dep.Spec.Replicas != 2 || pod.Containers[0].Image != "nginx:1.23.1" || !*pod.SecurityContext.RunAsNonRoot ||
			dep.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
			return fmt.Errorf("deployment not restored: replicas %d image %s labels %v", *dep.Spec.Replicas, pod.Containers[0].Image, dep.Labels)
		}
		svc := get(t, ns, "web", &corev1.Service{})
		if svc.Spec.Ports[0].Port != 80 || svc.Spec.Selector[appsv1alpha1.LabelInstance] != "web" || svc.Spec.Selector["app"] != "" {
			return fmt.Errorf("service not restored: port %d selector %v", svc.Spec.Ports[0].Port, svc.Spec.Selector)
		}
		return nil
	})
}

func TestDeletedChildrenAreRecreated(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 1, "nginx:1.23.1")
	dep, svc := childrenExist(t, ns)
	for _, child := range []client.Object{svc, dep} {
		if err := k8s.Delete(context.Background(), child); err != nil {
			t.Fatal(err)
		}
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		newDep, newSvc := &appsv1.Deployment{}, &corev1.Service{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(dep), newDep); err != nil {
			return err
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(svc), newSvc); err != nil {
			return err
		}
		if newDep.UID == dep.UID || newSvc.UID == svc.UID {
			return fmt.Errorf("children not replaced yet")
		}
		return nil
	})
}

func TestIdleWebServerMakesNoWrites(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 2, "nginx:1.23.1")
	childrenExist(t, ns)
	markDeploymentReady(t, ns)
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)

	versions := func() string {
		return strings.Join([]string{
			get(t, ns, "web", &appsv1alpha1.WebServer{}).ResourceVersion,
			get(t, ns, "web", &appsv1.Deployment{}).ResourceVersion,
			get(t, ns, "web", &corev1.Service{}).ResourceVersion,
			get(t, ns, "web-nginx", &corev1.ConfigMap{}).ResourceVersion,
		}, "/")
	}
	await.RequireUnchanged(t, "an idle WebServer's objects", versions)
}

func TestInvalidSpecsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidSpecsRejected(t, k8s, ns, "WebServer")
}

func TestInvalidUpdatesAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidUpdatesRejected(t, k8s, ns, "WebServer")
}

func TestValidUpdatesAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireValidUpdatesAccepted(t, k8s, ns, "WebServer")
}

func patchSpec(t *testing.T, ns, patch string) {
	t.Helper()
	ws := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	if err := k8s.Patch(context.Background(), ws, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func waitCondition(t *testing.T, ns, condType string, status metav1.ConditionStatus) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error {
		ws := get(t, ns, "web", &appsv1alpha1.WebServer{})
		return await.ConditionIs(ws.Status.Conditions, ws.Generation, condType, status)
	})
}

// wantCreatedEvent waits for the one Created Event that names every child a new WebServer got: a
// person reads that it got its children, not a line per child.
func wantCreatedEvent(t *testing.T, ns, note string) {
	t.Helper()
	await.WaitForEvents(t, k8s, ns, timeout, func(events []eventsv1.Event) error {
		var created []string
		for _, e := range events {
			if e.Reason == appsv1alpha1.EventCreated && e.Regarding.Name == "web" {
				created = append(created, e.Note)
			}
		}
		if len(created) != 1 || created[0] != note {
			return fmt.Errorf("Created events %q, want one: %q", created, note)
		}
		return nil
	})
}
