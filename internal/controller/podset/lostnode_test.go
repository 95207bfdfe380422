package podset_test

import (
	"context"
	"fmt"
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

// A pod on a node lost long enough holds its name: it is deleted with no grace period and made
// again, and a Warning Event says so; a pod on a node lost a moment ago is left for now, and the
// PodSet says it is Degraded because of it.
func TestAPodOnALostNodeIsMadeAgain(t *testing.T) {
	ns := newNamespace(t)
	create(t, newPodSet(ns, 2, "busybox"))
	pods := waitPods(t, ns, "web-0", "web-1")
	markReady(t, ns, "web-0")
	lost := kubesim.LostNode(t, k8s, ns+"-lost", nodeloss.Grace+5*time.Second)
	kubesim.BindPod(t, k8s, ns, "web-1", lost.Name)
	fresh := kubesim.LostNode(t, k8s, ns+"-just-lost", time.Second)
	kubesim.BindPod(t, k8s, ns, "web-0", fresh.Name)

	await.Eventually(t, timeout, func(ctx context.Context) error {
		again := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-1"}, again); err != nil {
			return err
		}
		if again.UID == pods["web-1"].UID {
			return fmt.Errorf("web-1 on the lost node %s is still there", lost.Name)
		}
		return nil
	})
	await.WantEvents(t, k8s, ns, timeout, "LostNodePodDeleted")
	kept := &corev1.Pod{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web-0"}, kept); err != nil || kept.UID != pods["web-0"].UID {
		t.Errorf("web-0, on a node lost %s ago, was deleted: %v", time.Second, err)
	}
	degraded := waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonNodeLost)
	if want := "pod web-0: its node " + fresh.Name + " has not reported since"; !strings.HasPrefix(degraded.Message, want) {
		t.Errorf("Degraded says %q, want it to start with %q", degraded.Message, want)
	}
}
