package metrics_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

func createWebServer(t *testing.T, ns string, replicas int32, image string) *appsv1alpha1.WebServer {
	t.Helper()
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To(replicas), Image: image},
	}
	if err := k8s.Create(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

// deployment waits for the WebServer web's Deployment and returns it.
func deployment(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep)
	})
	return dep
}

// markDeploymentReady plays the Deployment controller: every replica of the current template ready.
func markDeploymentReady(t *testing.T, ns string) {
	t.Helper()
	kubesim.MarkDeploymentReady(t, k8s, ns, "web", timeout)
}

func TestWebServerConditionsAndReplicasAreScraped(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "metrics")
	createWebServer(t, ns, 2, "nginx:1.23.1-typo")
	kubesim.StartPod(t, k8s, deployment(t, ns), "web-x1", false, appsv1alpha1.ReasonImagePullBackOff, timeout)

	degraded := func(status string) labels {
		return resource("WebServer", ns, "web", "condition", appsv1alpha1.ConditionDegraded, "status", status)
	}
	waitSample(t, "appkeeper_resource_condition", degraded("true"), 1)
	text := scrape(t)
	for status, want := range map[string]float64{"false": 0, "unknown": 0} {
		if got, ok := sample(text, "appkeeper_resource_condition", degraded(status)); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series("appkeeper_resource_condition", degraded(status)), got, ok, want)
		}
	}
	web := resource("WebServer", ns, "web")
	for name, want := range map[string]float64{"appkeeper_resource_replicas_desired": 2, "appkeeper_resource_replicas_ready": 0, "appkeeper_resource_rollbacks_total": 0} {
		if got, ok := sample(text, name, web); !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series(name, web), got, ok, want)
		}
	}
	ws := &appsv1alpha1.WebServer{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, ws); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(ws.Status.Conditions, appsv1alpha1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue {
		transition := resource("WebServer", ns, "web", "condition", appsv1alpha1.ConditionDegraded)
		if got, _ := sample(scrape(t), "appkeeper_resource_condition_last_transition_timestamp_seconds", transition); got != float64(c.LastTransitionTime.Unix()) {
			t.Errorf("Degraded last transition %v, want %d", got, c.LastTransitionTime.Unix())
		}
	}

	kubesim.SetPodStatus(t, k8s, ns, "web-x1", true, "", timeout)
	markDeploymentReady(t, ns)
	waitSample(t, "appkeeper_resource_condition", degraded("false"), 1)
	waitSample(t, "appkeeper_resource_replicas_ready", web, 2)

	if err := k8s.Delete(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"appkeeper_resource_replicas_desired", "appkeeper_resource_replicas_ready", "appkeeper_resource_rollbacks_total"} {
		waitAbsent(t, name, web)
	}
	waitAbsent(t, "appkeeper_resource_condition", degraded("false"))
}

// rolloutCounts are the rollout counters of a kind.
type rolloutCounts struct{ started, completed, rolledBack float64 }

func rollouts(t *testing.T, kind string) rolloutCounts {
	t.Helper()
	text, l := scrape(t), labels{"kind": kind}
	started, _ := sample(text, "appkeeper_rollouts_started_total", l)
	completed, _ := sample(text, "appkeeper_rollouts_completed_total", l)
	rolledBack, _ := sample(text, "appkeeper_rollouts_rolled_back_total", l)
	return rolloutCounts{started, completed, rolledBack}
}

// waitRollouts waits until the rollout counters of kind have grown by want since before.
func waitRollouts(t *testing.T, kind string, before, want rolloutCounts) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error {
		got := rollouts(t, kind)
		if d := (rolloutCounts{got.started - before.started, got.completed - before.completed, got.rolledBack - before.rolledBack}); d != want {
			return fmt.Errorf("rollouts of %s grew by %+v, want %+v", kind, d, want)
		}
		return nil
	})
}

// completeRollout plays the ReplicaSet controller, the kubelet and the Deployment controller for
// the current template: n ready pods named prefix-<i>, then the Deployment complete.
func completeRollout(t *testing.T, ns, prefix string, n int) {
	t.Helper()
	dep := deployment(t, ns)
	for i := range n {
		kubesim.StartPod(t, k8s, dep, fmt.Sprintf("%s-%d", prefix, i), true, "", timeout)
	}
	markDeploymentReady(t, ns)
}

// waitTemplateImage waits until the Deployment's pod template runs image.
func waitTemplateImage(t *testing.T, ns, image string) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error {
		if got := deployment(t, ns).Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("the Deployment's template runs %s, want %s", got, image)
		}
		return nil
	})
}

func patchImage(t *testing.T, ns, image string) {
	t.Helper()
	ws := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	patch := fmt.Sprintf(`{"spec":{"image":%q}}`, image)
	if err := k8s.Patch(context.Background(), ws, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func TestRolloutsAndRollbacksAreCounted(t *testing.T) {
	ns := testcluster.NewNamespace(t, k8s, "metrics")
	before := rollouts(t, "WebServer")
	createWebServer(t, ns, 2, "nginx:1.23.1")
	completeRollout(t, ns, "web-a", 2)
	waitSample(t, "appkeeper_resource_condition", resource("WebServer", ns, "web", "condition", appsv1alpha1.ConditionAvailable, "status", "true"), 1)
	// A new instance's first revision is no rollout.
	waitRollouts(t, "WebServer", before, rolloutCounts{})

	patchImage(t, ns, "nginx:1.23.2")
	waitTemplateImage(t, ns, "nginx:1.23.2")
	waitRollouts(t, "WebServer", before, rolloutCounts{started: 1})
	completeRollout(t, ns, "web-b", 2)
	waitRollouts(t, "WebServer", before, rolloutCounts{started: 1, completed: 1})

	patchImage(t, ns, "nginx:1.25.0-broken")
	waitTemplateImage(t, ns, "nginx:1.25.0-broken")
	kubesim.StartPod(t, k8s, deployment(t, ns), "web-c-0", false, appsv1alpha1.ReasonCrashLoopBackOff, timeout)
	waitTemplateImage(t, ns, "nginx:1.23.2")
	waitRollouts(t, "WebServer", before, rolloutCounts{started: 2, completed: 1, rolledBack: 1})
	waitSample(t, "appkeeper_resource_rollbacks_total", resource("WebServer", ns, "web"), 1)
}
