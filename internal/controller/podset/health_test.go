package podset_test

import (
	"context"
	"testing"

	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/appkeeper/appkeeper/internal/testutil"
)

// Flux, like every tool built on kstatus, judges a PodSet healthy by kstatus's verdict: it must not
// read as healthy before its pods are ready, while pods of an older template are replaced or while
// a pod cannot run.
func TestGitOpsToolsReadTheHealthOfAPodSet(t *testing.T) {
	ns := newNamespace(t)
	ps := newPodSet(ns, 2, goodImage)
	create(t, ps)
	testutil.RequireHealth(t, k8s, ps, status.InProgressStatus)
	waitPods(t, ns, "web-0", "web-1")
	testutil.WaitForHealth(t, k8s, ps, status.InProgressStatus, timeout)

	markReady(t, ns, "web-0", "web-1")
	testutil.WaitForHealth(t, k8s, ps, status.CurrentStatus, timeout)
	good := getPodSet(t, ns).Status.Rollout.CurrentRevision

	patchSpec := `{"spec":{"template":{"metadata":{"annotations":{"note":"changed"}}}}}`
	revision := newRevision(t, ns, patchSpec, good)
	testutil.RequireHealth(t, k8s, ps, status.InProgressStatus)
	runRevision(t, ns, revision, 2)
	testutil.WaitForHealth(t, k8s, ps, status.CurrentStatus, timeout)

	pods, err := podsOf(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	pod := sortedNames(pods)[0]
	crashLoop(t, ns, pod, "10s")
	testutil.WaitForHealth(t, k8s, ps, status.FailedStatus, timeout)
	testutil.SetPodStatus(t, k8s, ns, pod, true, "", timeout)
	testutil.WaitForHealth(t, k8s, ps, status.CurrentStatus, timeout)
}
