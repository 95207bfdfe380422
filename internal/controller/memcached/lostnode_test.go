package memcached_test

import (
	"context"
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

// A member on a node lost long enough holds its name, and the StatefulSet makes it again nowhere:
// it is deleted with no grace period, and a Warning Event says so. A member on a node lost a moment
// ago is left for now, and the Memcached says it is Degraded because of it.
func TestAMemberOnALostNodeIsDeletedForTheStatefulSetToMakeAgain(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 2, nil)
	childrenExist(t, ns)
	runMembers(t, ns, 2)
	waitStatus(t, ns, []string{"cache-0", "cache-1"}, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	lost := kubesim.LostNode(t, k8s, ns+"-lost", 2*nodeloss.Grace)
	kubesim.BindPod(t, k8s, ns, "cache-1", lost.Name)
	await.Gone(t, k8s, timeout, client.ObjectKey{Namespace: ns, Name: "cache-1"}, &corev1.Pod{}, "its node "+lost.Name+" is lost")
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventLostNodePodDeleted)
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cache-0"}, &corev1.Pod{}); err != nil {
		t.Errorf("cache-0, on no lost node: %v", err)
	}
	fresh := kubesim.LostNode(t, k8s, ns+"-just-lost", time.Second)
	kubesim.BindPod(t, k8s, ns, "cache-0", fresh.Name)
	waitMemcached(t, ns, degradedIs(metav1.ConditionTrue, appsv1alpha1.ReasonNodeLost))
}
