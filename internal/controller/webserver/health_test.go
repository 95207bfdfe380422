package webserver_test

import (
	"testing"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// Flux, like every tool built on kstatus, judges a WebServer healthy by kstatus's verdict: it must
// not read as healthy before the pods serve, during a rollout or while a pod cannot run.
func TestGitOpsToolsReadTheHealthOfAWebServer(t *testing.T) {
	ns := newNamespace(t)
	ws := createWebServer(t, ns, 2, "nginx:1.23.1")
	await.RequireHealth(t, k8s, ws, status.InProgressStatus)
	childrenExist(t, ns)
	await.WaitForHealth(t, k8s, ws, status.InProgressStatus, timeout)

	markDeploymentReady(t, ns)
	await.WaitForHealth(t, k8s, ws, status.CurrentStatus, timeout)

	patchSpec(t, ns, `{"spec":{"image":"nginx:1.23.2"}}`)
	await.RequireHealth(t, k8s, ws, status.InProgressStatus)
	waitCondition(t, ns, appsv1alpha1.ConditionProgressing, "True")
	await.RequireHealth(t, k8s, ws, status.InProgressStatus)
	markDeploymentReady(t, ns)
	await.WaitForHealth(t, k8s, ws, status.CurrentStatus, timeout)

	startPod(t, ns, "web-5d8f-x1", false, appsv1alpha1.ReasonImagePullBackOff)
	await.WaitForHealth(t, k8s, ws, status.FailedStatus, timeout)
	setPodStatus(t, ns, "web-5d8f-x1", true, "")
	await.WaitForHealth(t, k8s, ws, status.CurrentStatus, timeout)
}
