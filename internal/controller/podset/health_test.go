package podset_test

import (
	"context"
	"testing"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
)

// Flux, like every tool built on kstatus, judges a PodSet healthy by kstatus's verdict: it must not
// read as healthy before its pods are ready, while pods of an older template are replaced or while
// a pod cannot run.
func TestGitOpsToolsReadTheHealthOfAPodSet(t *testing.T) {
	ns := newNamespace(t)
	ps := newPodSet(ns, 2, goodImage)
	create(t, ps)
	await.RequireHealth(t, k8s, ps, status.InProgressStatus)
	waitPods(t, ns, "web-0", "web-1")
	await.WaitForHealth(t, k8s, ps, status.InProgressStatus, timeout)

	markReady(t, ns, "web-0", "web-1")
	await.WaitForHealth(t, k8s, ps, status.CurrentStatus, timeout)
	good := getPodSet(t, ns).Status.Rollout.CurrentRevision

	patchSpec := `{"spec":{"template":{"metadata":{"annotations":{"note":"changed"}}}}}`
	revision := newRevision(t, ns, patchSpec, good)
	await.RequireHealth(t, k8s, ps, status.InProgressStatus)
	runRevision(t, ns, revision, 2)
	await.WaitForHealth(t, k8s, ps, status.CurrentStatus, timeout)

	pods, err := podsOf(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	pod := sortedNames(pods)[0]
	crashLoop(t, ns, pod, "10s")
	await.WaitForHealth(t, k8s, ps, status.FailedStatus, timeout)
	kubesim.SetPodStatus(t, k8s, ns, pod, true, "", timeout)
	await.WaitForHealth(t, k8s, ps, status.CurrentStatus, timeout)
}
