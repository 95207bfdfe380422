package wordpress_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

// Flux, like every tool built on kstatus, judges a WordPress healthy by kstatus's verdict: it must
// not read as healthy while its database starts, before the site serves, during a rollout or while
// a pod cannot run.
func TestGitOpsToolsReadTheHealthOfAWordPress(t *testing.T) {
	ns := newNamespace(t)
	wp := createWordPress(t, ns, nil)
	await.RequireHealth(t, k8s, wp, status.InProgressStatus)
	waitWordPress(t, ns, appsv1alpha1.ConditionDatabaseReady, metav1.ConditionFalse, appsv1alpha1.ReasonWaitingForDatabase)
	await.RequireHealth(t, k8s, wp, status.InProgressStatus)

	runMySQL(t, ns, "blog-mysql")
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog", &appsv1.Deployment{}) })
	await.WaitForHealth(t, k8s, wp, status.InProgressStatus, timeout)
	markDeploymentReady(t, ns)
	await.WaitForHealth(t, k8s, wp, status.CurrentStatus, timeout)
	image := get(t, ns, "blog", &appsv1alpha1.WordPress{}).Spec.Image

	patchSpec(t, ns, `{"spec":{"image":"wordpress:6.8.3-apache"}}`)
	await.RequireHealth(t, k8s, wp, status.InProgressStatus)
	waitWordPress(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, "")
	if got := get(t, ns, "blog", &appsv1alpha1.WordPress{}); got.Status.Image != image {
		t.Errorf("status.image = %q before the rollout completed, want %s", got.Status.Image, image)
	}
	await.RequireHealth(t, k8s, wp, status.InProgressStatus)
	markDeploymentReady(t, ns)
	await.WaitForHealth(t, k8s, wp, status.CurrentStatus, timeout)

	kubesim.StartPod(t, k8s, get(t, ns, "blog", &appsv1.Deployment{}), "blog-5d8f-x1", false, appsv1alpha1.ReasonImagePullBackOff, timeout)
	await.WaitForHealth(t, k8s, wp, status.FailedStatus, timeout)
	kubesim.SetPodStatus(t, k8s, ns, "blog-5d8f-x1", true, "", timeout)
	await.WaitForHealth(t, k8s, wp, status.CurrentStatus, timeout)
}
