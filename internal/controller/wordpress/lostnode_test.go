package wordpress_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/nodeloss"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

// startSite starts a site of one or two replicas, blog-a and blog-b, with wp-content of accessMode.
func startSite(t *testing.T, ns string, replicas int32, accessMode corev1.PersistentVolumeAccessMode) {
	t.Helper()
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) {
		wp.Spec.Replicas = ptr.To(replicas)
		wp.Spec.Storage.AccessModes = []corev1.PersistentVolumeAccessMode{accessMode}
	})
	runMySQL(t, ns, "blog-mysql")
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog", &appsv1.Deployment{}) })
	for _, name := range []string{"blog-a", "blog-b"}[:replicas] {
		startPod(t, ns, name, true, "")
	}
	markDeploymentReady(t, ns)
}

// A site whose wp-content every node can mount loses its pod on a node lost long enough, for its
// Deployment to replace at once; a pod on a node lost a moment ago is left for now, and the site
// says it is Degraded because of it.
func TestAPodOfASharedSiteOnALostNodeIsDeleted(t *testing.T) {
	ns := newNamespace(t)
	startSite(t, ns, 2, corev1.ReadWriteMany)
	longLost := kubesim.LostNode(t, k8s, ns+"-lost", 2*nodeloss.Grace).Name
	kubesim.BindPod(t, k8s, ns, "blog-a", longLost)
	justLost := kubesim.LostNode(t, k8s, ns+"-just-lost", time.Second).Name
	kubesim.BindPod(t, k8s, ns, "blog-b", justLost)
	await.Gone(t, k8s, timeout, client.ObjectKey{Namespace: ns, Name: "blog-a"}, &corev1.Pod{}, "its node "+longLost+" is lost")
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventLostNodePodDeleted)
	wp := waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonNodeLost)
	if got, want := conditionMessage(wp, appsv1alpha1.ConditionDegraded), "pod blog-b: its node "+justLost; !strings.HasPrefix(got, want) {
		t.Errorf("Degraded says %q, want it to start with %q", got, want)
	}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog-b"}, &corev1.Pod{}); err != nil {
		t.Errorf("blog-b, on a node lost %s ago: %v", time.Second, err)
	}
}

// A site whose wp-content only one node can mount keeps its pod on a lost node: the volume may
// still be attached there. It says it is Degraded.
func TestAPodOfASiteOnOneNodesVolumeIsKeptOnALostNode(t *testing.T) {
	ns := newNamespace(t)
	startSite(t, ns, 1, corev1.ReadWriteOnce)
	longLost := kubesim.LostNode(t, k8s, ns+"-lost", 2*nodeloss.Grace).Name
	kubesim.BindPod(t, k8s, ns, "blog-a", longLost)
	wp := waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonNodeLost)
	if got, want := conditionMessage(wp, appsv1alpha1.ConditionDegraded), "pod blog-a: its node "+longLost; !strings.HasPrefix(got, want) {
		t.Errorf("Degraded says %q, want it to start with %q", got, want)
	}
	await.RequireUnchanged(t, "pod blog-a on the lost node "+longLost, func() string {
		pod := &corev1.Pod{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "blog-a"}, pod); err != nil {
			return err.Error()
		}
		return string(pod.UID)
	})
}
