package webserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/nodeloss"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

// A pod on a node lost long enough is deleted with no grace period, for its Deployment to make
// another at once rather than after its eviction; a Warning Event says so. A pod on a node lost a
// moment ago is left for now, and the WebServer says it is Degraded because of it.
func TestAPodOnALostNodeIsDeletedForItsDeploymentToReplace(t *testing.T) {
	ns := newNamespace(t)
	createWebServer(t, ns, 2, "nginx:1.27")
	dep, _ := childrenExist(t, ns)
	kubesim.StartPod(t, k8s, dep, "web-a", true, "", timeout)
	kubesim.StartPod(t, k8s, dep, "web-b", true, "", timeout)
	lost := kubesim.LostNode(t, k8s, ns+"-lost", 2*nodeloss.Grace)
	kubesim.BindPod(t, k8s, ns, "web-b", lost.Name)
	await.Gone(t, k8s, timeout, client.ObjectKey{Namespace: ns, Name: "web-b"}, &corev1.Pod{}, "its node "+lost.Name+" is lost")
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventLostNodePodDeleted)
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web-a"}, &corev1.Pod{}); err != nil {
		t.Errorf("web-a, on no lost node: %v", err)
	}
	fresh := kubesim.LostNode(t, k8s, ns+"-just-lost", time.Second)
	kubesim.BindPod(t, k8s, ns, "web-a", fresh.Name)
	degraded := waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonNodeLost)
	if want := "pod web-a: its node " + fresh.Name; !strings.HasPrefix(degraded.Message, want) {
		t.Errorf("Degraded says %q, want it to start with %q", degraded.Message, want)
	}
}
