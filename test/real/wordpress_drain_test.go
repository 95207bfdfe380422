//go:build real

package real

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// A site of two replicas on wp-content every node mounts, spread over two nodes: a drain of one
// pod's node moves the pod to another node, and a client asking the site's Service all along sees
// no failed request.
func TestASiteOfTwoReplicasAnswersEveryRequestThroughADrain(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "wpdrain", baseline)
	created := time.Now()
	kubectl(t, fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WordPress
metadata:
  name: blog
spec:
  image: %s
  replicas: 2
  storage: {size: 1Gi, accessModes: [ReadWriteMany]}
  database:
    mysql:
      image: %s
      storage: {size: 1Gi}
`, wordpressImage, mariadbImage), "apply", "-n", ns, "-f", "-")
	site := waitWordPress(t, ns, created, 2)
	installSite(t, site, "editor", "a long passphrase for the test site")
	wp := &appsv1alpha1.WordPress{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog"}, wp); err != nil {
		t.Fatal(err)
	}
	node := siteOnlyNode(t, ns, wp)
	warmUp(t, waitPods(t, ns, wp.SelectorLabels(), 2, wordpressImage), "Real node")

	drainAsked(t, ns, node, site+"/", "Real node", func() []corev1.Pod { return waitPods(t, ns, wp.SelectorLabels(), 2, wordpressImage) })
}

// siteOnlyNode is a node that runs one of the site's pods and no other pod of ns: a drain of it
// takes the site's pod and leaves its database alone.
func siteOnlyNode(t *testing.T, ns string, wp *appsv1alpha1.WordPress) string {
	t.Helper()
	all := &corev1.PodList{}
	if err := k8s.List(context.Background(), all, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	site := labels.SelectorFromSet(wp.SelectorLabels())
	others := map[string]bool{}
	for _, pod := range all.Items {
		if !site.Matches(labels.Set(pod.Labels)) {
			others[pod.Spec.NodeName] = true
		}
	}
	for _, pod := range waitPods(t, ns, wp.SelectorLabels(), 2, wordpressImage) {
		if !others[pod.Spec.NodeName] {
			return pod.Spec.NodeName
		}
	}
	t.Fatalf("every node that runs a pod of the site also runs another pod of %s", ns)
	return ""
}

// warmUp asks each pod for the home page until it answers with want: the first pages a pod renders
// after the site's installation fill its caches, and on a busy machine they can take longer than
// the poller waits, which would measure the warm-up rather than the drain.
func warmUp(t *testing.T, pods []corev1.Pod, want string) {
	t.Helper()
	for _, pod := range pods {
		home := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(appsv1alpha1.WordPressPort)) + "/"
		await.Eventually(t, time.Minute, func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, home, nil)
			if err != nil {
				return err
			}
			body, err := doUnbounded(req)
			if err == nil && !strings.Contains(body, want) {
				err = fmt.Errorf("%s answered without %q", home, want)
			}
			return err
		})
	}
}
