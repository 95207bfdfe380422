package webserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	resources "github.com/appkeeper/appkeeper/internal/resources/webserver"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// nginxConfig waits until the WebServer's nginx ConfigMap makes nginx listen on port.
func nginxConfig(t *testing.T, ns string, port int32) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-nginx"}, cm); err != nil {
			return err
		}
		if conf := cm.Data[resources.NginxConfigKey]; !strings.Contains(conf, fmt.Sprintf("listen %d;", port)) {
			return fmt.Errorf("nginx config does not listen on %d:\n%s", port, conf)
		}
		return nil
	})
	return cm
}

func TestNginxListensOnSpecPort(t *testing.T) {
	ns := newNamespace(t)
	ws := createWebServer(t, ns, 1, "nginx:1.23.1")
	dep, _ := childrenExist(t, ns)
	cm := nginxConfig(t, ns, 8080)
	if owner := metav1.GetControllerOf(cm); owner == nil || owner.UID != ws.UID {
		t.Errorf("ConfigMap owner = %+v, want the WebServer", owner)
	}
	hash := dep.Spec.Template.Annotations[resources.ConfigHashAnnotation]
	if hash == "" {
		t.Fatalf("pod template annotations = %v, want the config hash", dep.Spec.Template.Annotations)
	}

	// A hand edit is undone.
	cm.Data[resources.NginxConfigKey] = "server { listen 80; }"
	if err := k8s.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	cm = nginxConfig(t, ns, 8080)

	// A deleted ConfigMap comes back.
	if err := k8s.Delete(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		back := &corev1.ConfigMap{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(cm), back); err != nil {
			return err
		}
		if back.UID == cm.UID {
			return fmt.Errorf("ConfigMap not re-created yet")
		}
		return nil
	})

	// A new port reaches nginx, the container, and rolls the pods.
	patchSpec(t, ns, `{"spec":{"port":9000}}`)
	nginxConfig(t, ns, 9000)
	await.Eventually(t, timeout, func(context.Context) error {
		dep := get(t, ns, "web", &appsv1.Deployment{})
		c := dep.Spec.Template.Spec.Containers[0]
		if c.Ports[0].ContainerPort != 9000 || dep.Spec.Template.Annotations[resources.ConfigHashAnnotation] == hash {
			return fmt.Errorf("container port %d, config hash %q (was %q)", c.Ports[0].ContainerPort,
				dep.Spec.Template.Annotations[resources.ConfigHashAnnotation], hash)
		}
		return nil
	})
}
