//go:build real

package real

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// progressDeadline is the progress deadline of every scenario here. A revision that crash-loops
// is rolled back as soon as the kubelet reports the back-off, long before it.
const progressDeadline = 60 * time.Second

func TestWebServerRollsBackAnImageThatCannotStart(t *testing.T) {
	ns := newNamespace(t, "rollback-web", restricted)
	broken := cluster.BrokenImage()
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata:
  name: web
spec:
  image: %s
  replicas: 2
  upgrade: {progressDeadlineSeconds: %d}
`, nginxImage, int(progressDeadline.Seconds())), "apply", "-n", ns, "-f", "-")
	waitAvailable(t, ns, "WebServer", "web", created)
	serving := waitWebServer(t, ns, 2, nginxImage)
	service := serviceURL(t, ns, "web")
	requireAnswers(t, service, serving)
	counted := rollbacksCounted(t, "WebServer")

	e := startEpisode(t, "WebServer", ns, (&appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web"}}).SelectorLabels(),
		deploymentOf("web"), func(ctx context.Context) error {
			body, err := httpGet(ctx, service)
			if err == nil && !strings.Contains(body, welcome) {
				err = fmt.Errorf("answer without %q", welcome)
			}
			return err
		})
	kubectl(t, "", "patch", "-n", ns, "webserver", "web", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"image":%q}}`, broken))
	e.waitRolledBack(t, progressDeadline)
	e.waitAvailable(t, ns, "web", 3*time.Second)
	failures, _ := e.finish(t)

	// The Deployment surges one new pod and removes an old one only once a new one is available,
	// which never happens: both old pods serve throughout, and the broken pod, never Ready, gets
	// no traffic. A failed request can only be the host's own hiccup, under load.
	if len(failures) > 2 {
		t.Errorf("%d requests failed while the old pods kept serving, want at most 2", len(failures))
	}
	after := waitWebServer(t, ns, 2, nginxImage)
	if !samePods(serving, after) {
		t.Errorf("pods %v were replaced by %v: the old revision's pods were to keep serving", podNames(serving), podNames(after))
	}
	rolledBack(t, ns, "WebServer", "web", counted, 1, broken, nginxImage)
	ws := &appsv1alpha1.WebServer{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, ws); err != nil {
		t.Fatal(err)
	}
	if ws.Spec.Image != broken {
		t.Errorf("spec.image is %s, want the user's %s kept", ws.Spec.Image, broken)
	}
	requireAnswers(t, service, after)
}

func podNames(pods []corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// samePods tells whether a and b are the same pods, not merely pods of the same names.
func samePods(a, b []corev1.Pod) bool {
	uids := func(pods []corev1.Pod) []string {
		out := make([]string, 0, len(pods))
		for _, p := range pods {
			out = append(out, string(p.UID))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(uids(a), uids(b))
}
