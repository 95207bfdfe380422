package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// Revisions as the StatefulSet controller names them: the good template and the failed one.
const revGood, revBad = "db-good", "db-bad"

// runningGood creates the MySQL db and plays the StatefulSet controller until the operator records
// its first revision as the last good one, which it returns.
func runningGood(t *testing.T, ns string, mutate func(*appsv1alpha1.MySQL)) string {
	t.Helper()
	createMySQL(t, ns, func(m *appsv1alpha1.MySQL) {
		m.Spec.Image = "mysql:8.4.6"
		if mutate != nil {
			mutate(m)
		}
	})
	childrenExist(t, ns, true)
	runServer(t, ns, "db")
	m := waitMySQL(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, func(m *appsv1alpha1.MySQL) error {
		if m.Status.Rollout.LastGood == nil {
			return errors.New("no last good revision yet")
		}
		return nil
	})
	return m.Status.Rollout.LastGood.Name
}

// serverFails waits for the StatefulSet to run the template check accepts, then plays its
// controller's rollout to it: the new revision's pod, whose container waits for waiting.
func serverFails(t *testing.T, ns string, check func(*appsv1.StatefulSet) error, waiting string) *corev1.Pod {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error { return check(get(t, ns, "db", &appsv1.StatefulSet{})) })
	setRevisions(t, ns, "db", revGood, revBad)
	return startMember(t, ns, get(t, ns, "db", &appsv1.StatefulSet{}), revBad, waiting)
}

func imageIs(image string) func(*appsv1.StatefulSet) error {
	return func(sts *appsv1.StatefulSet) error {
		if got := container(sts).Image; got != image {
			return fmt.Errorf("statefulset image = %s, want %s", got, image)
		}
		return nil
	}
}

// rolledBack waits for Degraded RolledBack and returns the MySQL.
func rolledBack(t *testing.T, ns string) *appsv1alpha1.MySQL {
	t.Helper()
	return waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonRolledBack))
}

// restoredObserved plays the StatefulSet controller seeing the restored template: its update
// revision is the good one again, and no member is ready.
func restoredObserved(t *testing.T, ns string, check func(*appsv1.StatefulSet) error) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error { return check(get(t, ns, "db", &appsv1.StatefulSet{})) })
	setRevisions(t, ns, "db", revGood, revGood)
}

func podGone(t *testing.T, pod *corev1.Pod, within time.Duration) {
	t.Helper()
	await.Eventually(t, within, func(ctx context.Context) error {
		got := &corev1.Pod{}
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), got)
		switch {
		case apierrors.IsNotFound(err) || err == nil && got.UID != pod.UID:
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("pod %s of the failed revision is still there", pod.Name)
	})
}

// setWaiting gives the server container of pod name the waiting reason waiting.
func setWaiting(t *testing.T, ns, name, waiting string) {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return err
		}
		pod.Status.ContainerStatuses[0].State.Waiting.Reason = waiting
		return k8s.Status().Update(ctx, pod)
	})
}

// holdsFor requires check to pass again and again for d.
func holdsFor(t *testing.T, d time.Duration, check func() error) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err := check(); err != nil {
			t.Fatal(err)
		}
	}
}

// wantEventNaming waits for a Warning of reason whose note holds every one of words.
func wantEventNaming(t *testing.T, ns, reason string, words ...string) {
	t.Helper()
	await.WaitForEvents(t, k8s, ns, timeout, func(events []eventsv1.Event) error {
	next:
		for _, e := range events {
			if e.Reason != reason || e.Type != corev1.EventTypeWarning {
				continue
			}
			for _, w := range words {
				if !strings.Contains(e.Note, w) {
					continue next
				}
			}
			return nil
		}
		return fmt.Errorf("no Warning %s naming %q", reason, words)
	})
}

func TestFailedImageIsRolledBack(t *testing.T) {
	ns := newNamespace(t)
	good := runningGood(t, ns, nil)
	const broken = "mysql:8.4.7-broken"
	patchSpec(t, ns, fmt.Sprintf(`{"spec":{"image":%q}}`, broken))
	failed := serverFails(t, ns, imageIs(broken), appsv1alpha1.ReasonImagePullBackOff)

	m := rolledBack(t, ns)
	ro := m.Status.Rollout
	if ro.Failed == nil || ro.Failed.Name != ro.UpdateRevision || ro.Failed.Image != broken || ro.Failed.Reason != appsv1alpha1.ReasonImagePullBackOff ||
		ro.Failed.Backup != "" {
		t.Errorf("status.rollout.failed = %+v, want the revision of %s, ImagePullBackOff, no backup", ro.Failed, broken)
	}
	if ro.CurrentRevision != good || ro.LastGood.Name != good || ro.LastGood.Image != "mysql:8.4.6" || ro.Rollbacks != 1 {
		t.Errorf("status.rollout current/lastGood/rollbacks = %s/%+v/%d, want %s/%s/1", ro.CurrentRevision, ro.LastGood, ro.Rollbacks, good, good)
	}
	if m.Spec.Image != broken {
		t.Errorf("spec.image = %s, want it as written, %s", m.Spec.Image, broken)
	}
	if err := imageIs("mysql:8.4.6")(get(t, ns, "db", &appsv1.StatefulSet{})); err != nil {
		t.Errorf("the last good image is not back: %v", err)
	}
	wantEventNaming(t, ns, appsv1alpha1.EventRolledBack, ro.Failed.Name, good, broken)

	// Once the StatefulSet's controller has seen the restored template, the failed pod goes at once.
	restoredObserved(t, ns, imageIs("mysql:8.4.6"))
	podGone(t, failed, 5*time.Second)
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventWedgedPodDeleted)

	// The restored revision's pod is left to start, and even failing it neither rolls back again
	// nor brings back the failed revision.
	restored := startMember(t, ns, get(t, ns, "db", &appsv1.StatefulSet{}), revGood, "ContainerCreating")
	setWaiting(t, ns, "db-0", appsv1alpha1.ReasonCrashLoopBackOff)
	holdsFor(t, 2*time.Second, func() error {
		m := get(t, ns, "db", &appsv1alpha1.MySQL{})
		switch {
		case m.Status.Rollout.Rollbacks != 1 || m.Status.Rollout.CurrentRevision != good:
			return fmt.Errorf("status.rollout = %+v, want one rollback, to %s", m.Status.Rollout, good)
		case imageIs("mysql:8.4.6")(get(t, ns, "db", &appsv1.StatefulSet{})) != nil:
			return errors.New("the failed revision was tried again")
		case get(t, ns, "db-0", &corev1.Pod{}).UID != restored.UID:
			return errors.New("the pod of the restored revision was deleted")
		}
		return nil
	})
}

func TestAutoRollbackOffKeepsTheFailedServer(t *testing.T) {
	ns := newNamespace(t)
	runningGood(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Upgrade.AutoRollback = ptr.To(false) })
	const broken = "mysql:8.4.7-broken"
	patchSpec(t, ns, fmt.Sprintf(`{"spec":{"image":%q}}`, broken))
	serverFails(t, ns, imageIs(broken), appsv1alpha1.ReasonImagePullBackOff)
	waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonImagePullBackOff))
	holdsFor(t, 2*time.Second, func() error {
		m := get(t, ns, "db", &appsv1alpha1.MySQL{})
		if ro := m.Status.Rollout; ro.Failed != nil || ro.Rollbacks != 0 || ro.CurrentRevision != ro.UpdateRevision {
			return fmt.Errorf("status.rollout = %+v, want the spec's revision kept", ro)
		}
		return imageIs(broken)(get(t, ns, "db", &appsv1.StatefulSet{}))
	})
}

// TestRejectedConfigIsRolledBack: a line mysqld refuses makes the server crash-loop; the rollback
// restores the last good my.cnf along with the pod, and a fixed spec is then tried.
func TestRejectedConfigIsRolledBack(t *testing.T) {
	ns := newNamespace(t)
	runningGood(t, ns, func(m *appsv1alpha1.MySQL) { m.Spec.Config = []string{"max_connections=200"} })
	goodHash := get(t, ns, "db", &appsv1.StatefulSet{}).Spec.Template.Annotations[resources.ConfigHashAnnotation]
	patchSpec(t, ns, `{"spec":{"config":["max_connections=200","innodb_no_such_option=1"]}}`)
	failed := serverFails(t, ns, func(sts *appsv1.StatefulSet) error {
		if sts.Spec.Template.Annotations[resources.ConfigHashAnnotation] == goodHash {
			return errors.New("the pod template still has the good my.cnf")
		}
		return nil
	}, appsv1alpha1.ReasonCrashLoopBackOff)

	m := rolledBack(t, ns)
	if f := m.Status.Rollout.Failed; f == nil || f.Reason != appsv1alpha1.ReasonCrashLoopBackOff {
		t.Errorf("status.rollout.failed = %+v, want CrashLoopBackOff", f)
	}
	if len(m.Spec.Config) != 2 {
		t.Errorf("spec.config = %q, want it as written", m.Spec.Config)
	}
	goodConfig := func(sts *appsv1.StatefulSet) error {
		cnf := get(t, ns, "db-config", &corev1.ConfigMap{}).Data["appkeeper.cnf"]
		switch hash := sts.Spec.Template.Annotations[resources.ConfigHashAnnotation]; {
		case strings.Contains(cnf, "innodb_no_such_option") || !strings.Contains(cnf, "\nmax_connections=200\n"):
			return fmt.Errorf("my.cnf = %q, want the good one back", cnf)
		case hash != goodHash || hash != resources.ConfigHash(cnf):
			return fmt.Errorf("config hash %s, want the good %s, matching my.cnf", hash, goodHash)
		}
		return nil
	}
	if err := goodConfig(get(t, ns, "db", &appsv1.StatefulSet{})); err != nil {
		t.Error(err)
	}
	restoredObserved(t, ns, goodConfig)
	podGone(t, failed, 5*time.Second)

	// Creation times have whole seconds: a person fixes the spec later than the second the
	// failed pod was made, which would otherwise count as the new revision's.
	time.Sleep(time.Second)
	patchSpec(t, ns, `{"spec":{"config":["max_connections=300"]}}`)
	await.Eventually(t, timeout, func(context.Context) error {
		if cnf := get(t, ns, "db-config", &corev1.ConfigMap{}).Data["appkeeper.cnf"]; !strings.Contains(cnf, "\nmax_connections=300\n") {
			return fmt.Errorf("my.cnf = %q, want the fixed spec's", cnf)
		}
		return nil
	})
	waitMySQL(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionTrue, func(m *appsv1alpha1.MySQL) error {
		if ro := m.Status.Rollout; ro.Failed != nil || ro.CurrentRevision != ro.UpdateRevision {
			return fmt.Errorf("status.rollout = %+v, want the fixed revision under way", ro)
		}
		return nil
	})
}

// TestRollbackOlderThanTheDataIsRefused: the data volume records the failed server's version, so
// the last good server could not read the data; the failed revision stays and Degraded says why.
func TestRollbackOlderThanTheDataIsRefused(t *testing.T) {
	ns := newNamespace(t)
	runningGood(t, ns, withBackups)
	backupName := upgradeWithBackup(t, ns, "mysql:9.1.0")
	// As if the new server had rewritten the data files and its version had been recorded.
	claim := get(t, ns, "data-db-0", &corev1.PersistentVolumeClaim{})
	patch := client.MergeFrom(claim.DeepCopy())
	claim.Annotations[resources.DataImageAnnotation] = "mysql:9.1.0"
	if err := k8s.Patch(context.Background(), claim, patch); err != nil {
		t.Fatal(err)
	}
	serverFails(t, ns, imageIs("mysql:9.1.0"), appsv1alpha1.ReasonCrashLoopBackOff)

	m := waitMySQL(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, reasonIs(appsv1alpha1.ConditionDegraded, appsv1alpha1.ReasonRollbackRefused))
	msg := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded).Message
	for _, want := range []string{"mysql:9.1.0", "mysql:8.4.6", "CrashLoopBackOff", backupName} {
		if !strings.Contains(msg, want) {
			t.Errorf("Degraded message = %q, want it to name %s", msg, want)
		}
	}
	wantEventNaming(t, ns, appsv1alpha1.ReasonRollbackRefused, backupName)
	holdsFor(t, 2*time.Second, func() error {
		m := get(t, ns, "db", &appsv1alpha1.MySQL{})
		if ro := m.Status.Rollout; ro.Failed != nil || ro.Rollbacks != 0 {
			return fmt.Errorf("status.rollout = %+v, want no rollback", ro)
		}
		return imageIs("mysql:9.1.0")(get(t, ns, "db", &appsv1.StatefulSet{}))
	})
}

// TestFailedTuningIsRolledBack: tuning turned to Auto writes settings the server then fails on; the
// rollback restores the last good my.cnf, without them, and status.tuning says they are
// recommended only, while the spec keeps Auto as written.
func TestFailedTuningIsRolledBack(t *testing.T) {
	ns := newNamespace(t)
	runningGood(t, ns, func(m *appsv1alpha1.MySQL) {
		m.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	})
	goodHash := get(t, ns, "db", &appsv1.StatefulSet{}).Spec.Template.Annotations[resources.ConfigHashAnnotation]
	patchSpec(t, ns, `{"spec":{"tuning":{"mode":"Auto"}}}`)
	serverFails(t, ns, func(sts *appsv1.StatefulSet) error {
		if sts.Spec.Template.Annotations[resources.ConfigHashAnnotation] == goodHash {
			return errors.New("the pod template still has the good my.cnf")
		}
		return nil
	}, appsv1alpha1.ReasonCrashLoopBackOff)

	m := rolledBack(t, ns)
	if m.Spec.Tuning.Mode != appsv1alpha1.TuningAuto {
		t.Errorf("spec.tuning.mode = %s, want Auto as written", m.Spec.Tuning.Mode)
	}
	if m.Status.Tuning == nil || m.Status.Tuning.Mode != appsv1alpha1.TuningRecommend {
		t.Errorf("status.tuning = %+v, want the good revision's, Recommend", m.Status.Tuning)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		cnf := get(t, ns, "db-config", &corev1.ConfigMap{}).Data["appkeeper.cnf"]
		hash := get(t, ns, "db", &appsv1.StatefulSet{}).Spec.Template.Annotations[resources.ConfigHashAnnotation]
		if strings.Contains(cnf, "innodb_buffer_pool_size") || hash != goodHash {
			return fmt.Errorf("my.cnf = %q with hash %s, want the good one, %s, without the tuned settings", cnf, hash, goodHash)
		}
		return nil
	})
}
