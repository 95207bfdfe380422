package wordpress_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/kubesim"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

const (
	goodImage = appsv1alpha1.DefaultWordPressImage
	badImage  = "wordpress:6.9.0-broken"
)

// startPod does what the ReplicaSet controller and the kubelet would: it creates a pod of the
// site's Deployment as it stands and gives it a status, ready or waiting for waitingReason.
func startPod(t *testing.T, ns, name string, ready bool, waitingReason string) {
	t.Helper()
	kubesim.StartPod(t, k8s, get(t, ns, "blog", &appsv1.Deployment{}), name, ready, waitingReason, timeout)
}

func setPodStatus(t *testing.T, ns, name string, ready bool, waitingReason string) {
	t.Helper()
	kubesim.SetPodStatus(t, k8s, ns, name, ready, waitingReason, timeout)
}

// waitRollout waits until check accepts the site's rollout status and returns the WordPress.
func waitRollout(t *testing.T, ns string, check func(appsv1alpha1.RolloutStatus) error) *appsv1alpha1.WordPress {
	t.Helper()
	wp := &appsv1alpha1.WordPress{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := exists(ctx, ns, "blog", wp); err != nil {
			return err
		}
		return check(wp.Status.Rollout)
	})
	return wp
}

// waitTemplateImage waits until the Deployment's pod template runs image.
func waitTemplateImage(t *testing.T, ns, image string) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		dep := &appsv1.Deployment{}
		if err := exists(ctx, ns, "blog", dep); err != nil {
			return err
		}
		if got := dep.Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("the Deployment's template runs %s, want %s", got, image)
		}
		return nil
	})
}

// firstRollout creates the WordPress blog with its own MySQL and the upgrade policy, runs the
// MySQL, completes the site's first rollout with the pod blog-a-0 and returns the revision the
// status records as the last good one.
func firstRollout(t *testing.T, ns string, policy appsv1alpha1.UpgradePolicy) string {
	t.Helper()
	createWordPress(t, ns, func(wp *appsv1alpha1.WordPress) { wp.Spec.Upgrade = policy })
	runMySQL(t, ns, "blog-mysql")
	await.Eventually(t, timeout, func(ctx context.Context) error { return exists(ctx, ns, "blog", &appsv1.Deployment{}) })
	startPod(t, ns, "blog-a-0", true, "")
	markDeploymentReady(t, ns)
	wp := waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.LastGood == nil || st.LastGood.Name != st.CurrentRevision || st.UpdateRevision != st.CurrentRevision || st.LastGood.Image != goodImage {
			return fmt.Errorf("rollout %+v, want the first revision the last good one", st)
		}
		return nil
	})
	return wp.Status.Rollout.LastGood.Name
}

// newRevision applies patch to the spec and returns the revision it makes, once applied.
func newRevision(t *testing.T, ns, patch, good string) string {
	t.Helper()
	patchSpec(t, ns, patch)
	wp := waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.UpdateRevision == good || st.CurrentRevision != st.UpdateRevision {
			return fmt.Errorf("current/update revision %s/%s, want a new revision applied", st.CurrentRevision, st.UpdateRevision)
		}
		return nil
	})
	return wp.Status.Rollout.UpdateRevision
}

// rollBack takes the site through a good first rollout and a new image and resources whose pod,
// blog-b-0, crash-loops, and waits for the rollback. It returns the failed and the good revision.
func rollBack(t *testing.T, ns string) (failed, good string) {
	t.Helper()
	good = firstRollout(t, ns, appsv1alpha1.UpgradePolicy{})
	failed = newRevision(t, ns, `{"spec":{"image":"`+badImage+`","resources":{"limits":{"memory":"256Mi"}}}}`, good)
	startPod(t, ns, "blog-b-0", false, appsv1alpha1.ReasonCrashLoopBackOff)
	crashed := time.Now()
	waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error { return await.RolledBack(st, failed, good, 1) })
	t.Logf("rolled back %s after the pod crash-looped", time.Since(crashed).Round(time.Millisecond))
	return failed, good
}

func TestCrashLoopingRevisionIsRolledBack(t *testing.T) {
	ns := newNamespace(t)
	counted := testenv.Rollbacks(t, "WordPress")
	failed, good := rollBack(t, ns)
	db := get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{})

	waitTemplateImage(t, ns, goodImage)
	if limits := get(t, ns, "blog", &appsv1.Deployment{}).Spec.Template.Spec.Containers[0].Resources.Limits; len(limits) != 0 {
		t.Errorf("the rolled back template has limits %v, want the good revision's none", limits)
	}
	wp := get(t, ns, "blog", &appsv1alpha1.WordPress{})
	if wp.Spec.Image != badImage || wp.Spec.Resources.Limits.Memory().String() != "256Mi" {
		t.Errorf("spec image %s, limits %v after the rollback, want the user's", wp.Spec.Image, wp.Spec.Resources.Limits)
	}
	if f := wp.Status.Rollout.Failed; f.Reason != appsv1alpha1.ReasonCrashLoopBackOff || f.Image != badImage || !strings.Contains(f.Message, "blog-b-0") {
		t.Errorf("failed %+v", f)
	}
	wp = waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)
	if msg := conditionMessage(wp, appsv1alpha1.ConditionDegraded); !strings.Contains(msg, failed) || !strings.Contains(msg, good) {
		t.Errorf("Degraded %q does not name revisions %s and %s", msg, failed, good)
	}
	await.WantRolledBackEvent(t, k8s, ns, timeout, failed, good)
	if got := testenv.Rollbacks(t, "WordPress"); got != counted+1 {
		t.Errorf("appkeeper_rollouts_rolled_back_total{kind=WordPress} = %v, want %v", got, counted+1)
	}

	// The Deployment controller replaces the failed pod with one of the good template.
	kubesim.DeletePod(t, k8s, ns, "blog-b-0")
	markDeploymentReady(t, ns)
	waitWordPress(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolledBack)
	waitWordPress(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, "")
	wp = waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack)
	if wp.Status.Image != goodImage || wp.Status.Rollout.Rollbacks != 1 {
		t.Errorf("status.image %s, %d rollbacks; want %s, 1", wp.Status.Image, wp.Status.Rollout.Rollbacks, goodImage)
	}
	// The site's rollback leaves its MySQL as the spec says: it rolls back on its own terms.
	if after := get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{}); after.Generation != db.Generation {
		t.Errorf("the MySQL's spec changed with the site's rollback: generation %d -> %d", db.Generation, after.Generation)
	}
}

// TestRolledBackRevisionIsNotRetried checks that a rollback is final until the spec changes: the
// restored revision failing as well rolls nothing back again, and the passes it starts write
// nothing.
func TestRolledBackRevisionIsNotRetried(t *testing.T) {
	ns := newNamespace(t)
	failed, good := rollBack(t, ns)
	kubesim.DeletePod(t, k8s, ns, "blog-b-0")
	markDeploymentReady(t, ns)
	waitWordPress(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolledBack)

	versions := func() string {
		return strings.Join([]string{
			get(t, ns, "blog", &appsv1alpha1.WordPress{}).ResourceVersion,
			get(t, ns, "blog", &appsv1.Deployment{}).ResourceVersion,
			get(t, ns, "blog", &corev1.Service{}).ResourceVersion,
			fmt.Sprint(get(t, ns, "blog-mysql", &appsv1alpha1.MySQL{}).Generation),
		}, "/")
	}
	time.Sleep(time.Second) // the status write that the Deployment's completion causes settles
	before, passes := versions(), testenv.Reconciles(t, "wordpress")
	// A pod of the restored revision crash-loops as well.
	startPod(t, ns, "blog-a-1", false, appsv1alpha1.ReasonCrashLoopBackOff)
	testenv.ChangesNothing(t, "wordpress", passes, 2, before, versions)
	waitTemplateImage(t, ns, goodImage)
	if err := await.RolledBack(get(t, ns, "blog", &appsv1alpha1.WordPress{}).Status.Rollout, failed, good, 1); err != nil {
		t.Error(err)
	}
	await.WantRolledBackEvent(t, k8s, ns, timeout, failed, good)
}

func TestSpecChangeAfterRollbackTriesTheNewRevision(t *testing.T) {
	ns := newNamespace(t)
	failed, good := rollBack(t, ns)
	kubesim.DeletePod(t, k8s, ns, "blog-b-0")

	fixed := newRevision(t, ns, `{"spec":{"image":"wordpress:6.9.1-php8.3-apache"}}`, good)
	if fixed == failed {
		t.Fatalf("a new image made the failed revision %s again", fixed)
	}
	waitTemplateImage(t, ns, "wordpress:6.9.1-php8.3-apache")
	if st := get(t, ns, "blog", &appsv1alpha1.WordPress{}).Status.Rollout; st.Failed != nil || st.Rollbacks != 1 || st.LastGood.Name != good {
		t.Errorf("rollout %+v while the new revision rolls out, want no failure, 1 rollback, last good %s", st, good)
	}
	startPod(t, ns, "blog-c-0", true, "")
	markDeploymentReady(t, ns)
	waitRollout(t, ns, func(st appsv1alpha1.RolloutStatus) error {
		if st.LastGood == nil || st.LastGood.Name != fixed || st.Failed != nil || st.Rollbacks != 1 {
			return fmt.Errorf("rollout %+v, want %s the last good revision after 1 rollback", st, fixed)
		}
		return nil
	})
	waitWordPress(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse, appsv1alpha1.ReasonRolloutComplete)
	waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, "")
}

func TestFailedRevisionStaysWithoutAutoRollback(t *testing.T) {
	ns := newNamespace(t)
	counted := testenv.Rollbacks(t, "WordPress")
	good := firstRollout(t, ns, appsv1alpha1.UpgradePolicy{AutoRollback: ptr.To(false)})
	bad := newRevision(t, ns, `{"spec":{"image":"`+badImage+`"}}`, good)
	startPod(t, ns, "blog-b-0", false, appsv1alpha1.ReasonCrashLoopBackOff)
	wp := waitWordPress(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonCrashLoopBackOff)
	if msg := conditionMessage(wp, appsv1alpha1.ConditionDegraded); !strings.Contains(msg, "blog-b-0") {
		t.Errorf("Degraded %q does not name the crash-looping pod", msg)
	}
	time.Sleep(2 * time.Second)
	waitTemplateImage(t, ns, badImage)
	st := get(t, ns, "blog", &appsv1alpha1.WordPress{}).Status.Rollout
	if st.Failed != nil || st.Rollbacks != 0 || st.CurrentRevision != bad || st.LastGood.Name != good {
		t.Errorf("rollout %+v, want revision %s applied and %s the last good one", st, bad, good)
	}
	await.RequireNoRolledBackEvent(t, k8s, ns)
	if got := testenv.Rollbacks(t, "WordPress"); got != counted {
		t.Errorf("appkeeper_rollouts_rolled_back_total{kind=WordPress} = %v, want %v", got, counted)
	}
}

func TestProgressDeadlineRollsBack(t *testing.T) {
	ns := newNamespace(t)
	good := firstRollout(t, ns, appsv1alpha1.UpgradePolicy{ProgressDeadlineSeconds: ptr.To[int32](10)})
	start := time.Now()
	failed := newRevision(t, ns, `{"spec":{"image":"wordpress:6.9.1-php8.3-apache"}}`, good)
	// The new pod runs but never turns ready.
	startPod(t, ns, "blog-b-0", false, "")

	var took time.Duration
	wp := &appsv1alpha1.WordPress{}
	await.Eventually(t, 2*timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blog"}, wp); err != nil {
			return err
		}
		took = time.Since(start)
		return await.RolledBack(wp.Status.Rollout, failed, good, 1)
	})
	t.Logf("rolled back %s after the spec change, with a deadline of 10s", took.Round(10*time.Millisecond))
	// The deadline counts from the second after the one the status keeps: never early, at most a
	// second late, plus the pass.
	if took < 10*time.Second || took > 13*time.Second {
		t.Errorf("rolled back %s after the spec change, want about 10s", took)
	}
	if f := wp.Status.Rollout.Failed; f.Reason != appsv1alpha1.ReasonProgressDeadline {
		t.Errorf("failed %+v, want reason %s", f, appsv1alpha1.ReasonProgressDeadline)
	}
	waitTemplateImage(t, ns, goodImage)
}
