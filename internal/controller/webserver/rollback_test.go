package webserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/webserver"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

const (
	goodImage = "nginx:1.23.1"
	badImage  = "nginx:1.25.0-broken"
)

// waitRollout waits until check accepts the WebServer's rollout status and returns the WebServer.
func waitRollout(t *testing.T, ns string, check func(appsv1alpha1.RolloutStatus) error) *appsv1alpha1.WebServer {
	t.Helper()
	ws := &appsv1alpha1.WebServer{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ws); err != nil {
			return err
		}
		return check(ws.Status.Rollout)
	})
	return ws
}

// waitReason waits until the WebServer reports condType at status for its generation, with reason
// unless reason is empty, and returns the condition.
func waitReason(t *testing.T, ns, condType string, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	var c metav1.Condition
	await.Eventually(t, timeout, func(context.Context) error {
		ws := get(t, ns, "web", &appsv1alpha1.WebServer{})
		if err := await.ConditionIs(ws.Status.Conditions, ws.Generation, condType, status); err != nil {
			return err
		}
		c = *meta.FindStatusCondition(ws.Status.Conditions, condType)
		if reason != "" && c.Reason != reason {
			return fmt.Errorf("%s reason %s (%s), want %s", condType, c.Reason, c.Message, reason)
		}
		return nil
	})
	return c
}

// waitTemplateImage waits until the Deployment's pod template runs image and returns it.
func waitTemplateImage(t *testing.T, ns, image string) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep); err != nil {
			return err
		}
		if got := dep.Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("the Deployment's template runs %s, want %s", got, image)
		}
		return nil
	})
	return dep
}

// completeRollout plays the ReplicaSet controller, the kubelet and the Deployment controller for
// the Deployment's current template: n ready pods named prefix-<i>, then the Deployment complete.
func completeRollout(t *testing.T, ns, prefix string, n int) {
	t.Helper()
	for i := range n {
		startPod(t, ns, fmt.Sprintf("%s-%d", prefix, i), true, "")
	}
	markDeploymentReady(t, ns)
}

// firstRollout creates the WebServer web with two replicas of goodImage and the upgrade policy,
// completes its first rollout and returns the revision the status records as the last good one.
func firstRollout(t *testing.T, ns string, policy appsv1alpha1.UpgradePolicy) string {
	t.Helper()
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To[int32](2), Image: goodImage, Upgrade: policy},
	}
	if err := k8s.Create(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	childrenExist(t, ns)
	completeRollout(t, ns, "web-a", 2)
	ws = waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		switch {
		case st.LastGood == nil:
			return fmt.Errorf("no last good revision in %+v", st)
		case st.LastGood.Name != st.CurrentRevision || st.UpdateRevision != st.CurrentRevision || st.LastGood.Image != goodImage:
			return fmt.Errorf("last good revision %+v, current %s, update %s", st.LastGood, st.CurrentRevision, st.UpdateRevision)
		case st.Failed != nil || st.Rollbacks != 0:
			return fmt.Errorf("failed %+v, %d rollbacks after a good first rollout", st.Failed, st.Rollbacks)
		}
		return nil
	})
	return ws.Status.Rollout.LastGood.Name
}

// newRevision applies patch to the spec, waits until the operator applies the revision it makes
// (another than good) and returns that revision.
func newRevision(t *testing.T, ns, patch, good string) string {
	t.Helper()
	patchSpec(t, ns, patch)
	ws := waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.UpdateRevision == good || st.CurrentRevision != st.UpdateRevision {
			return fmt.Errorf("current/update revision %s/%s, want a new revision applied", st.CurrentRevision, st.UpdateRevision)
		}
		return nil
	})
	return ws.Status.Rollout.UpdateRevision
}

// rollBack takes the WebServer web through a good first rollout and a new image whose first pod
// crash-loops, web-b-0, and waits for the rollback. It returns the failed and the good revision.
func rollBack(t *testing.T, ns string) (failed, good string) {
	t.Helper()
	good = firstRollout(t, ns, appsv1alpha1.UpgradePolicy{})
	failed = newRevision(t, ns, `{"spec":{"image":"`+badImage+`"}}`, good)
	startPod(t, ns, "web-b-0", false, appsv1alpha1.ReasonCrashLoopBackOff)
	crashed := time.Now()
	waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error { return await.RolledBack(st, failed, good, 1) })
	t.Logf("rolled back %s after the pod crash-looped", time.Since(crashed).Round(time.Millisecond))
	return failed, good
}

func TestCrashLoopingRevisionIsRolledBack(t *testing.T) {
	ns := newNamespace(t)
	counted := testenv.Rollbacks(t, "WebServer")
	failed, good := rollBack(t, ns)

	waitTemplateImage(t, ns, goodImage)
	ws := get(t, ns, "web", &appsv1alpha1.WebServer{})
	if ws.Spec.Image != badImage {
		t.Errorf("spec.image = %s after the rollback, want the user's %s", ws.Spec.Image, badImage)
	}
	st := ws.Status.Rollout
	if st.Failed.Reason != appsv1alpha1.ReasonCrashLoopBackOff || st.Failed.Image != badImage || !strings.Contains(st.Failed.Message, "web-b-0") ||
		st.LastGood.Image != goodImage {
		t.Errorf("failed %+v, last good image %s", st.Failed, st.LastGood.Image)
	}
	degraded := waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)
	if !strings.Contains(degraded.Message, failed) || !strings.Contains(degraded.Message, good) {
		t.Errorf("Degraded %q does not name revisions %s and %s", degraded.Message, failed, good)
	}
	await.WantRolledBackEvent(t, k8s, ns, timeout, failed, good)
	if got := testenv.Rollbacks(t, "WebServer"); got != counted+1 {
		t.Errorf("appkeeper_rollouts_rolled_back_total{kind=WebServer} = %v, want %v", got, counted+1)
	}

	// The Deployment controller scales the failed ReplicaSet down and the good one back up.
	kubesim.DeletePod(t, k8s, ns, "web-b-0")
	markDeploymentReady(t, ns)
	waitReason(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolledBack)
	waitReason(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, "")
	waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)
	if got := get(t, ns, "web", &appsv1alpha1.WebServer{}).Status; got.Image != goodImage || got.Rollout.Rollbacks != 1 {
		t.Errorf("status.image %s, %d rollbacks; want %s, 1", got.Image, got.Rollout.Rollbacks, goodImage)
	}
	// It serves, but not the revision the spec asks for: GitOps tools must not call it healthy.
	await.RequireHealth(t, k8s, ws, status.FailedStatus)
}

// TestRolledBackRevisionIsNotRetried checks that a rollback is final until the spec changes: the
// restored revision failing as well rolls nothing back again, and the passes it starts write
// nothing.
func TestRolledBackRevisionIsNotRetried(t *testing.T) {
	ns := newNamespace(t)
	failed, good := rollBack(t, ns)
	kubesim.DeletePod(t, k8s, ns, "web-b-0")
	markDeploymentReady(t, ns)
	waitReason(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolledBack)

	versions := func() string {
		return strings.Join([]string{
			get(t, ns, "web", &appsv1alpha1.WebServer{}).ResourceVersion,
			get(t, ns, "web", &appsv1.Deployment{}).ResourceVersion,
			get(t, ns, "web", &corev1.Service{}).ResourceVersion,
			get(t, ns, "web-nginx", &corev1.ConfigMap{}).ResourceVersion,
		}, "/")
	}
	time.Sleep(time.Second) // the status write that the Deployment's completion causes settles
	before, passes := versions(), testenv.Reconciles(t, "webserver")
	// A pod of the restored revision crash-loops as well.
	startPod(t, ns, "web-a-2", false, appsv1alpha1.ReasonCrashLoopBackOff)
	testenv.ChangesNothing(t, "webserver", passes, 2, before, versions)
	waitTemplateImage(t, ns, goodImage)
	if err := await.RolledBack(get(t, ns, "web", &appsv1alpha1.WebServer{}).Status.Rollout, failed, good, 1); err != nil {
		t.Error(err)
	}
	await.WantRolledBackEvent(t, k8s, ns, timeout, failed, good)
}

func TestSpecChangeAfterRollbackTriesTheNewRevision(t *testing.T) {
	ns := newNamespace(t)
	failed, good := rollBack(t, ns)
	kubesim.DeletePod(t, k8s, ns, "web-b-0")

	fixed := newRevision(t, ns, `{"spec":{"image":"nginx:1.25.3"}}`, good)
	if fixed == failed {
		t.Fatalf("a new image made the failed revision %s again", fixed)
	}
	waitTemplateImage(t, ns, "nginx:1.25.3")
	if st := get(t, ns, "web", &appsv1alpha1.WebServer{}).Status.Rollout; st.Failed != nil || st.Rollbacks != 1 || st.LastGood.Name != good {
		t.Errorf("rollout %+v while the new revision rolls out, want no failure, 1 rollback, last good %s", st, good)
	}
	waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, "")

	completeRollout(t, ns, "web-c", 2)
	waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.LastGood == nil || st.LastGood.Name != fixed || st.LastGood.Image != "nginx:1.25.3" || st.Failed != nil || st.Rollbacks != 1 {
			return fmt.Errorf("rollout %+v, want %s the last good revision after 1 rollback", st, fixed)
		}
		return nil
	})
	waitReason(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolloutComplete)
}

func TestFailedRevisionStaysWithoutAutoRollback(t *testing.T) {
	ns := newNamespace(t)
	counted := testenv.Rollbacks(t, "WebServer")
	good := firstRollout(t, ns, appsv1alpha1.UpgradePolicy{AutoRollback: ptr.To(false), ProgressDeadlineSeconds: ptr.To[int32](10)})
	bad := newRevision(t, ns, `{"spec":{"image":"`+badImage+`"}}`, good)
	startPod(t, ns, "web-b-0", false, appsv1alpha1.ReasonCrashLoopBackOff)
	degraded := waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonCrashLoopBackOff)
	if !strings.Contains(degraded.Message, "web-b-0") {
		t.Errorf("Degraded %q does not name the crash-looping pod", degraded.Message)
	}

	// The container stops crashing but never turns ready: the deadline names the failure.
	setPodStatus(t, ns, "web-b-0", false, "")
	await.Eventually(t, timeout, func(context.Context) error {
		ws := get(t, ns, "web", &appsv1alpha1.WebServer{})
		c := meta.FindStatusCondition(ws.Status.Conditions, appsv1alpha1.ConditionDegraded)
		if c == nil || c.Reason != appsv1alpha1.ReasonProgressDeadline || !strings.Contains(c.Message, "automatic rollback is off") {
			return fmt.Errorf("Degraded = %+v, want ProgressDeadlineExceeded saying automatic rollback is off", c)
		}
		return nil
	})
	waitTemplateImage(t, ns, badImage)
	st := get(t, ns, "web", &appsv1alpha1.WebServer{}).Status.Rollout
	if st.Failed != nil || st.Rollbacks != 0 || st.CurrentRevision != bad || st.UpdateRevision != bad || st.LastGood.Name != good {
		t.Errorf("rollout %+v, want revision %s applied and %s the last good one", st, bad, good)
	}
	await.RequireNoRolledBackEvent(t, k8s, ns)
	if got := testenv.Rollbacks(t, "WebServer"); got != counted {
		t.Errorf("appkeeper_rollouts_rolled_back_total{kind=WebServer} = %v, want %v", got, counted)
	}
}

func TestProgressDeadlineRollsBack(t *testing.T) {
	ns := newNamespace(t)
	good := firstRollout(t, ns, appsv1alpha1.UpgradePolicy{ProgressDeadlineSeconds: ptr.To[int32](10)})
	start := time.Now()
	failed := newRevision(t, ns, `{"spec":{"image":"nginx:1.25.3"}}`, good)
	// The new pod runs but never turns ready.
	startPod(t, ns, "web-b-0", false, "")

	var took time.Duration
	ws := &appsv1alpha1.WebServer{}
	await.Eventually(t, 2*timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, ws); err != nil {
			return err
		}
		took = time.Since(start)
		return await.RolledBack(ws.Status.Rollout, failed, good, 1)
	})
	t.Logf("rolled back %s after the spec change, with a deadline of 10s", took.Round(10*time.Millisecond))
	// The deadline counts from the second after the one the status keeps: never early, at most a
	// second late, plus the pass.
	if took < 10*time.Second || took > 13*time.Second {
		t.Errorf("rolled back %s after the spec change, want about 10s", took)
	}
	if f := ws.Status.Rollout.Failed; f.Reason != appsv1alpha1.ReasonProgressDeadline {
		t.Errorf("failed %+v, want reason %s", f, appsv1alpha1.ReasonProgressDeadline)
	}
	waitTemplateImage(t, ns, goodImage)
	waitReason(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)
}

// TestFailedPortChangeRollsBackTheConfig checks that a rollback restores every child the pods
// depend on: nginx's server block and the port the Service reaches, not only the Deployment.
func TestFailedPortChangeRollsBackTheConfig(t *testing.T) {
	ns := newNamespace(t)
	good := firstRollout(t, ns, appsv1alpha1.UpgradePolicy{})
	goodHash := get(t, ns, "web", &appsv1.Deployment{}).Spec.Template.Annotations[resources.ConfigHashAnnotation]
	failed := newRevision(t, ns, `{"spec":{"port":9000}}`, good)
	nginxConfig(t, ns, 9000)
	startPod(t, ns, "web-b-0", false, appsv1alpha1.ReasonCrashLoopBackOff)
	waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error { return await.RolledBack(st, failed, good, 1) })

	nginxConfig(t, ns, 8080)
	await.Eventually(t, timeout, func(context.Context) error {
		dep := get(t, ns, "web", &appsv1.Deployment{})
		port := dep.Spec.Template.Spec.Containers[0].Ports[0]
		if port.Name != "http" || port.ContainerPort != 8080 || dep.Spec.Template.Annotations[resources.ConfigHashAnnotation] != goodHash {
			return fmt.Errorf("container port %s=%d, config hash %q; want http=8080, %q", port.Name, port.ContainerPort,
				dep.Spec.Template.Annotations[resources.ConfigHashAnnotation], goodHash)
		}
		return nil
	})
	// The Service targets the container port by name, which is 8080 again.
	if svc := get(t, ns, "web", &corev1.Service{}); svc.Spec.Ports[0].TargetPort != intstr.FromString("http") {
		t.Errorf("Service target port %v, want the container port named http", svc.Spec.Ports[0].TargetPort)
	}
	if ws := get(t, ns, "web", &appsv1alpha1.WebServer{}); ws.Spec.Port != 9000 {
		t.Errorf("spec.port = %d after the rollback, want the user's 9000", ws.Spec.Port)
	}
}
