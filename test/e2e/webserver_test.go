//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/test/framework/admission"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func TestWebServerLifecycle(t *testing.T) {
	ns := newNamespace(t, "web")
	kubectl(t, `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata:
  name: shop
spec:
  image: nginx:1.23.1
  replicas: 3
`, "apply", "-n", ns, "-f", "-")

	waitWebServer(t, ns, 3, "nginx:1.23.1")

	kubectl(t, "", "patch", "-n", ns, "webserver", "shop", "--type=merge", "-p", `{"spec":{"replicas":4}}`)
	waitWebServer(t, ns, 4, "nginx:1.23.1")

	kubectl(t, "", "scale", "-n", ns, "webserver/shop", "--replicas=5")
	waitWebServer(t, ns, 5, "nginx:1.23.1")
	kubectl(t, "", "scale", "-n", ns, "ws/shop", "--replicas=4")
	waitWebServer(t, ns, 4, "nginx:1.23.1")

	kubectl(t, "", "patch", "-n", ns, "ws", "shop", "--type=merge", "-p", `{"spec":{"image":"nginx:1.23.0"}}`)
	waitWebServer(t, ns, 4, "nginx:1.23.0")

	svc := &corev1.Service{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "shop"}, svc); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		back := &corev1.Service{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, back); err != nil {
			return err
		}
		if back.UID == svc.UID {
			return fmt.Errorf("service not deleted yet")
		}
		return nil
	})
	t.Logf("deleted Service back after %s", time.Since(deleted).Round(time.Millisecond))

	out := kubectl(t, "", "get", "-n", ns, "appkeeper")
	if !strings.Contains(out, "shop") || !strings.Contains(out, "nginx:1.23.0") {
		t.Errorf("kubectl get appkeeper:\n%s", out)
	}

	kubectl(t, "", "delete", "-n", ns, "webserver", "shop")
	await.Eventually(t, timeout, func(ctx context.Context) error {
		for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.PodList{}} {
			if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
			if n := meta.LenList(list); n > 0 {
				return fmt.Errorf("%d %T items left", n, list)
			}
		}
		return nil
	})
}

// waitWebServer waits until the WebServer shop runs replicas Running and Ready pods of image and
// reports Available=True with that image for its current generation.
func waitWebServer(t *testing.T, ns string, replicas int, image string) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		ws := &appsv1alpha1.WebServer{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, ws); err != nil {
			return err
		}
		if ws.Status.Image != image || int(ws.Status.ReadyReplicas) != replicas {
			return fmt.Errorf("status image %q ready %d", ws.Status.Image, ws.Status.ReadyReplicas)
		}
		if err := await.ConditionIs(ws.Status.Conditions, ws.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue); err != nil {
			return err
		}
		if err := await.ConditionIs(ws.Status.Conditions, ws.Generation, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse); err != nil {
			return err
		}
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(ws.SelectorLabels())); err != nil {
			return err
		}
		ready := 0
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && conditions.PodReady(&pod) && pod.Spec.Containers[0].Image == image {
				ready++
			}
		}
		if ready != replicas || len(pods.Items) != replicas {
			return fmt.Errorf("%d pods, %d running and ready with %s, want %d", len(pods.Items), ready, image, replicas)
		}
		return nil
	})
}

func TestInvalidSpecsAreRejected(t *testing.T) {
	ns := newNamespace(t, "invalid")
	for _, tt := range admission.InvalidObjects() {
		t.Run(tt.Test, func(t *testing.T) {
			manifest, err := yaml.Marshal(map[string]any{
				"apiVersion": appsv1alpha1.GroupVersion.String(), "kind": tt.Kind,
				"metadata": map[string]any{"name": tt.Name},
				"spec":     tt.Spec,
			})
			if err != nil {
				t.Fatal(err)
			}
			out := kubectlFails(t, string(manifest), "create", "-n", ns, "-f", "-")
			if !admission.Mentions(out, tt.Message) {
				t.Errorf("kubectl create said:\n%s\nwant it to name %q", out, tt.Message)
			}
		})
	}
}
