package memcached_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

// Flux, like every tool built on kstatus, judges a Memcached healthy by kstatus's verdict: it must
// not read as healthy before the members serve, during a rollout or while a member cannot run.
func TestGitOpsToolsReadTheHealthOfAMemcached(t *testing.T) {
	ns := newNamespace(t)
	mc := createMemcached(t, ns, 2, nil)
	await.RequireHealth(t, k8s, mc, status.InProgressStatus)
	childrenExist(t, ns)
	await.WaitForHealth(t, k8s, mc, status.InProgressStatus, timeout)

	runMembers(t, ns, 2)
	await.WaitForHealth(t, k8s, mc, status.CurrentStatus, timeout)
	if got := get(t, ns, "cache", &appsv1alpha1.Memcached{}); got.Status.Image != appsv1alpha1.DefaultMemcachedImage {
		t.Errorf("status.image = %q once the members run %s", got.Status.Image, appsv1alpha1.DefaultMemcachedImage)
	}

	mc = get(t, ns, "cache", &appsv1alpha1.Memcached{})
	mc.Spec.Image = "memcached:1.6.39-alpine"
	if err := k8s.Update(context.Background(), mc); err != nil {
		t.Fatal(err)
	}
	await.RequireHealth(t, k8s, mc, status.InProgressStatus)
	await.Eventually(t, timeout, func(context.Context) error {
		if image := get(t, ns, "cache", &appsv1.StatefulSet{}).Spec.Template.Spec.Containers[0].Image; image != mc.Spec.Image {
			return fmt.Errorf("statefulset image = %s", image)
		}
		return nil
	})
	await.WaitForHealth(t, k8s, mc, status.InProgressStatus, timeout)
	if got := get(t, ns, "cache", &appsv1alpha1.Memcached{}); got.Status.Image != appsv1alpha1.DefaultMemcachedImage {
		t.Errorf("status.image = %q before the rollout completed", got.Status.Image)
	}
	runMembers(t, ns, 2)
	await.WaitForHealth(t, k8s, mc, status.CurrentStatus, timeout)
	if got := get(t, ns, "cache", &appsv1alpha1.Memcached{}); got.Status.Image != mc.Spec.Image {
		t.Errorf("status.image = %q once the members run %s", got.Status.Image, mc.Spec.Image)
	}

	kubesim.SetPodStatus(t, k8s, ns, "cache-1", false, appsv1alpha1.ReasonCrashLoopBackOff, timeout)
	await.WaitForHealth(t, k8s, mc, status.FailedStatus, timeout)
	kubesim.SetPodStatus(t, k8s, ns, "cache-1", true, "", timeout)
	await.WaitForHealth(t, k8s, mc, status.CurrentStatus, timeout)
}
