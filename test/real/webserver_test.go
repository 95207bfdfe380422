//go:build real

package real

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

const welcome = "Welcome to nginx!"

func TestWebServerServesScalesRollsAndRecovers(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "web", restricted)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata:
  name: web
spec:
  image: %s
  replicas: 2
`, nginxImage), "apply", "-n", ns, "-f", "-")
	took := waitAvailable(t, ns, "WebServer", "web", created)
	pods := waitWebServer(t, ns, 2, nginxImage)
	t.Logf("pod start latency: WebServer with 2 replicas Available %s after it was created", took)

	service := serviceURL(t, ns, "web")
	requireAnswers(t, service, pods)

	for _, replicas := range []int{4, 2} {
		scaled := time.Now()
		kubectl(t, "", "scale", "-n", ns, "webserver/web", "--replicas="+strconv.Itoa(replicas))
		pods = waitWebServer(t, ns, replicas, nginxImage)
		t.Logf("scaled to %d replicas, all answering, in %s", replicas, time.Since(scaled).Round(time.Millisecond))
		requireAnswers(t, service, pods)
	}

	t.Run("image change rolls the pods without a failed request", func(t *testing.T) {
		retagged := nginxImage + "-b"
		if err := cluster.TagImage(context.Background(), nginxImage, retagged); err != nil {
			t.Fatal(err)
		}
		p := startPoller(service, welcome)
		patched := time.Now()
		kubectl(t, "", "patch", "-n", ns, "webserver", "web", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"image":%q}}`, retagged))
		waitAvailable(t, ns, "WebServer", "web", patched)
		pods := waitWebServer(t, ns, 2, retagged)
		rollout := time.Since(patched).Round(time.Millisecond)
		// Old pods' connections drain after they leave the Service: keep asking a little longer.
		time.Sleep(2 * time.Second)
		ok, failures, _ := p.stop()
		t.Logf("rollout to %s took %s; %d requests answered, %d failed during it", retagged, rollout, ok, len(failures))
		if len(failures) > 0 {
			t.Errorf("%d requests to the Service failed during the rollout:\n%s", len(failures), strings.Join(failures, "\n"))
		}
		requireAnswers(t, service, pods)
	})

	t.Run("killed nginx is restarted while the Service answers", func(t *testing.T) {
		image := nginxImage + "-b"
		victim := waitWebServer(t, ns, 2, image)[0]
		restarts := restartCount(&victim)
		p := startPoller(service, welcome)
		time.Sleep(time.Second)
		killed := time.Now()
		killMainProcess(t, &victim)
		await.Eventually(t, timeout, func(ctx context.Context) error {
			pod := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(&victim), pod); err != nil {
				return err
			}
			if restartCount(pod) <= restarts {
				return fmt.Errorf("pod %s restarted %d times, want more than %d", pod.Name, restartCount(pod), restarts)
			}
			return podServing(pod, image)
		})
		restarted := time.Since(killed).Round(time.Millisecond)
		waitAvailable(t, ns, "WebServer", "web", killed)
		waitWebServer(t, ns, 2, image)
		back := time.Now()
		time.Sleep(3 * time.Second)
		ok, failures, lastFailure := p.stop()
		t.Logf("container restarted and Ready %s after the kill; %d requests answered, %d failed", restarted, ok, len(failures))
		if len(failures) > 0 {
			t.Logf("failed requests:\n%s", strings.Join(failures, "\n"))
		}
		// Only the requests kube-proxy sent to the killed pod before it left the Service may fail.
		if total := ok + len(failures); len(failures)*5 > total {
			t.Errorf("%d of %d requests failed while one of two pods restarted, want the large majority answered", len(failures), total)
		}
		if lastFailure.After(back) {
			t.Errorf("a request failed at %s, after the WebServer was Available again", lastFailure.Format(time.StampMilli))
		}
		requireAnswers(t, service, waitWebServer(t, ns, 2, image))
	})

	t.Run("a drain moves a pod to another node without a failed request", func(t *testing.T) {
		image := nginxImage + "-b"
		node := waitWebServer(t, ns, 2, image)[0].Spec.NodeName
		pods := drainAsked(t, ns, node, service, welcome, func() []corev1.Pod { return waitWebServer(t, ns, 2, image) })
		requireAnswers(t, service, pods)
	})
}

// waitWebServer waits until the WebServer web runs replicas Running and Ready pods of image on the
// real node, and none other, and reports them and image in its status; it returns the pods.
func waitWebServer(t *testing.T, ns string, replicas int, image string) []corev1.Pod {
	t.Helper()
	ws := &appsv1alpha1.WebServer{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ws); err != nil {
			return err
		}
		if ws.Status.Image != image || int(ws.Status.ReadyReplicas) != replicas {
			return fmt.Errorf("status image %q ready %d", ws.Status.Image, ws.Status.ReadyReplicas)
		}
		return nil
	})
	return waitPods(t, ns, ws.SelectorLabels(), replicas, image)
}

// serviceURL is the address of the Service name's first port: its ClusterIP, which the host reaches
// through kube-proxy.
func serviceURL(t *testing.T, ns, name string) string {
	t.Helper()
	svc := &corev1.Service{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP == "" || len(svc.Spec.Ports) == 0 {
		t.Fatalf("Service %s has no ClusterIP or port: %+v", name, svc.Spec)
	}
	return "http://" + net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port))) + "/"
}

// requireAnswers requires nginx's page from the Service and from every pod directly, on the port
// its container declares.
func requireAnswers(t *testing.T, service string, pods []corev1.Pod) {
	t.Helper()
	urls := []string{service}
	for _, pod := range pods {
		port := pod.Spec.Containers[0].Ports[0].ContainerPort
		urls = append(urls, "http://"+net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port)))+"/")
	}
	for _, url := range urls {
		await.Eventually(t, 30*time.Second, func(ctx context.Context) error {
			body, err := httpGet(ctx, url)
			if err != nil {
				return err
			}
			if !strings.Contains(body, welcome) {
				return fmt.Errorf("GET %s: no %q in %q", url, welcome, body)
			}
			return nil
		})
	}
}
