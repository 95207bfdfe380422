//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// rollbackCase is one kind in the rollback scenario: an instance named name running good, then
// asked for broken (an image kwok's nodes crash-loop), then for fixed.
type rollbackCase struct {
	kind, name, manifest string
	good, broken, fixed  string
	// imagePointer is the JSON pointer of the image in the resource.
	imagePointer string
	// running are the images the instance's children run or are about to run.
	running func(ctx context.Context, ns string) ([]string, error)
}

var rollbackCases = []rollbackCase{
	{kind: "WebServer", name: "shop", good: "nginx:1.27", broken: "nginx:broken", fixed: "nginx:1.28", imagePointer: "/spec/image",
		manifest: "spec:\n  image: nginx:1.27\n  replicas: 3\n", running: deploymentImages("shop")},
	{kind: "Memcached", name: "cache", good: appsv1alpha1.DefaultMemcachedImage, broken: "memcached:broken", fixed: "memcached:1.6.39-alpine",
		imagePointer: "/spec/image", manifest: "spec:\n  size: 3\n", running: statefulSetImages("cache")},
	{kind: "PodSet", name: "batch", good: "busybox:1.36", broken: "busybox:broken", fixed: "busybox:1.37",
		imagePointer: "/spec/template/spec/containers/0/image", running: podSetImages("batch"), manifest: `spec:
  replicas: 3
  maxUnavailable: 1
  template:
    spec:
      containers:
        - name: main
          image: busybox:1.36
          command: ["sleep", "3600"]
`},
	{kind: "MySQL", name: "db", good: appsv1alpha1.DefaultMySQLImage, broken: "mysql:broken", fixed: "mysql:8.4.7", imagePointer: "/spec/image",
		manifest: "spec:\n  database: shop\n  user: shop\n", running: statefulSetImages("db")},
	{kind: "WordPress", name: "blog", good: appsv1alpha1.DefaultWordPressImage, broken: "wordpress:broken", fixed: "wordpress:6.8.4-php8.3-apache",
		imagePointer: "/spec/image", manifest: "spec:\n  database:\n    mysql:\n      storage:\n        size: 5Gi\n", running: deploymentImages("blog")},
}

// TestRollbackOfABrokenImage runs, for every kind, a rollout to an image whose pods crash-loop:
// the operator puts the last good revision back by itself, keeps the spec as written, does not
// try the failed revision again, and rolls out the next good image as usual.
func TestRollbackOfABrokenImage(t *testing.T) {
	for _, tc := range rollbackCases {
		t.Run(tc.kind, func(t *testing.T) {
			// Each kind waits ~10 s watching for a loop: side by side, the whole runs in about that.
			t.Parallel()
			ns := newNamespace(t, "rollback-"+strings.ToLower(tc.kind))
			kubectl(t, fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n%s", appsv1alpha1.GroupVersion, tc.kind, tc.name, tc.manifest),
				"apply", "-n", ns, "-f", "-")
			good := tc.waitGood(t, ns, tc.good, 0)

			tc.setImage(t, ns, tc.broken)
			patched := time.Now()
			failed := tc.waitRolledBack(t, ns, good)
			t.Logf("%s rolled back to %s %s after the spec asked for %s", tc.kind, tc.good, time.Since(patched).Round(time.Millisecond), tc.broken)
			tc.wantRolledBackEvent(t, ns, failed, good)
			tc.wantNoLoop(t, ns, failed)

			tc.setImage(t, ns, tc.fixed)
			tc.waitGood(t, ns, tc.fixed, 1)
		})
	}
}

// setImage asks for image, with a progress deadline of 30 s.
func (tc rollbackCase) setImage(t *testing.T, ns, image string) {
	t.Helper()
	patch, err := json.Marshal([]map[string]any{
		{"op": "add", "path": tc.imagePointer, "value": image},
		{"op": "add", "path": "/spec/upgrade", "value": map[string]any{"progressDeadlineSeconds": 30}},
	})
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, "", "patch", "-n", ns, strings.ToLower(tc.kind), tc.name, "--type=json", "-p", string(patch))
}

// instance is the resource as the API server has it, with its rollout status and conditions.
type instance struct {
	obj        *unstructured.Unstructured
	rollout    appsv1alpha1.RolloutStatus
	conditions []metav1.Condition
}

func (tc rollbackCase) get(ctx context.Context, ns string) (*instance, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(appsv1alpha1.GroupVersion.String())
	u.SetKind(tc.kind)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: tc.name}, u); err != nil {
		return nil, err
	}
	in := &instance{obj: u}
	var status struct {
		Rollout    appsv1alpha1.RolloutStatus `json:"rollout"`
		Conditions []metav1.Condition         `json:"conditions"`
	}
	if raw, ok := u.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status); err != nil {
			return nil, err
		}
	}
	in.rollout, in.conditions = status.Rollout, status.Conditions
	return in, nil
}

// condition returns nil when the instance reports condType with status (and reason, if given)
// for its generation.
func (in *instance) condition(condType string, status metav1.ConditionStatus, reason string) error {
	if err := await.ConditionIs(in.conditions, in.obj.GetGeneration(), condType, status); err != nil {
		return err
	}
	if c := meta.FindStatusCondition(in.conditions, condType); reason != "" && c.Reason != reason {
		return fmt.Errorf("%s reason %s (%s), want %s", condType, c.Reason, c.Message, reason)
	}
	return nil
}

// specImage is the image the spec asks for.
func (tc rollbackCase) specImage(in *instance) string {
	var at any = in.obj.Object
	for _, key := range strings.Split(strings.TrimPrefix(tc.imagePointer, "/"), "/") {
		switch v := at.(type) {
		case map[string]any:
			at = v[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i >= len(v) {
				return ""
			}
			at = v[i]
		}
	}
	s, _ := at.(string)
	return s
}

// runsOnly returns nil when every child runs image.
func (tc rollbackCase) runsOnly(ctx context.Context, ns, image string) error {
	images, err := tc.running(ctx, ns)
	if err != nil {
		return err
	}
	for _, got := range images {
		if got != image {
			return fmt.Errorf("children run %q, want %s only", images, image)
		}
	}
	if len(images) == 0 {
		return fmt.Errorf("no children yet")
	}
	return nil
}

// waitGood waits until image is the last good revision, runs, and the instance is Available and
// not Degraded, with rollbacks rolled back so far; it returns the rollout status.
func (tc rollbackCase) waitGood(t *testing.T, ns, image string, rollbacks int32) appsv1alpha1.RolloutStatus {
	t.Helper()
	var st appsv1alpha1.RolloutStatus
	await.Eventually(t, timeout, func(ctx context.Context) error {
		in, err := tc.get(ctx, ns)
		if err != nil {
			return err
		}
		st = in.rollout
		switch {
		case st.LastGood == nil || st.LastGood.Image != image || st.CurrentRevision != st.LastGood.Name:
			return fmt.Errorf("rollout %+v, want %s the last good revision and current", st, image)
		case st.Failed != nil || st.Rollbacks != rollbacks:
			return fmt.Errorf("failed %+v, rollbacks %d, want none and %d", st.Failed, st.Rollbacks, rollbacks)
		}
		if err := in.condition(appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, ""); err != nil {
			return err
		}
		if err := in.condition(appsv1alpha1.ConditionDegraded, metav1.ConditionFalse, ""); err != nil {
			return err
		}
		return tc.runsOnly(ctx, ns, image)
	})
	return st
}

// waitRolledBack waits until the broken revision has failed and the good one runs again, Available,
// and returns the failed revision.
func (tc rollbackCase) waitRolledBack(t *testing.T, ns string, good appsv1alpha1.RolloutStatus) appsv1alpha1.FailedRevision {
	t.Helper()
	var failed appsv1alpha1.FailedRevision
	await.Eventually(t, timeout, func(ctx context.Context) error {
		in, err := tc.get(ctx, ns)
		if err != nil {
			return err
		}
		st := in.rollout
		switch {
		case st.Failed == nil || st.Failed.Image != tc.broken || st.Failed.Name != st.UpdateRevision || st.Failed.Name == good.LastGood.Name:
			return fmt.Errorf("failed %+v, update revision %s: want the broken revision", st.Failed, st.UpdateRevision)
		case st.Failed.Reason != appsv1alpha1.ReasonCrashLoopBackOff:
			// Its pods crash-loop at once: the progress deadline is not what finds it.
			return fmt.Errorf("failed for %s (%s), want %s", st.Failed.Reason, st.Failed.Message, appsv1alpha1.ReasonCrashLoopBackOff)
		case st.CurrentRevision != good.LastGood.Name || st.LastGood == nil || st.LastGood.Name != good.LastGood.Name || st.Rollbacks != 1:
			return fmt.Errorf("rollout %+v, want revision %s current and last good, 1 rollback", st, good.LastGood.Name)
		}
		failed = *st.Failed
		if err := in.condition(appsv1alpha1.ConditionDegraded, metav1.ConditionTrue, appsv1alpha1.ReasonRolledBack); err != nil {
			return err
		}
		if err := in.condition(appsv1alpha1.ConditionAvailable, metav1.ConditionTrue, ""); err != nil {
			return err
		}
		if image := tc.specImage(in); image != tc.broken {
			return fmt.Errorf("spec image %q, want %s as written", image, tc.broken)
		}
		return tc.runsOnly(ctx, ns, tc.good)
	})
	return failed
}

// wantRolledBackEvent waits for the Warning that names the failed and the restored revision.
func (tc rollbackCase) wantRolledBackEvent(t *testing.T, ns string, failed appsv1alpha1.FailedRevision, good appsv1alpha1.RolloutStatus) {
	t.Helper()
	await.WaitForEvents(t, k8s, ns, timeout, func(events []eventsv1.Event) error {
		rolledBack := tc.rolledBackEvents(events)
		if len(rolledBack) != 1 {
			return fmt.Errorf("%d RolledBack events of %s %s, want 1", len(rolledBack), tc.kind, tc.name)
		}
		e := rolledBack[0]
		if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Note, failed.Name) || !strings.Contains(e.Note, good.LastGood.Name) {
			return fmt.Errorf("event %s %q, want a Warning naming revisions %s and %s", e.Type, e.Note, failed.Name, good.LastGood.Name)
		}
		return nil
	})
}

func (tc rollbackCase) rolledBackEvents(events []eventsv1.Event) []eventsv1.Event {
	var out []eventsv1.Event
	for _, e := range events {
		if e.Reason == appsv1alpha1.EventRolledBack && e.Regarding.Kind == tc.kind && e.Regarding.Name == tc.name {
			out = append(out, e)
		}
	}
	return out
}

// wantNoLoop checks for about 10 s that the good image stays, with one rollback and one Event:
// the failed revision is not tried again.
func (tc rollbackCase) wantNoLoop(t *testing.T, ns string, failed appsv1alpha1.FailedRevision) {
	t.Helper()
	ctx := context.Background()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		in, err := tc.get(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		if st := in.rollout; st.Rollbacks != 1 || st.Failed == nil || st.Failed.Name != failed.Name {
			t.Fatalf("rollout %+v, want the one rollback of %s", st, failed.Name)
		}
		if err := tc.runsOnly(ctx, ns, tc.good); err != nil {
			t.Fatalf("after the rollback: %v", err)
		}
	}
	events := &eventsv1.EventList{}
	if err := k8s.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range tc.rolledBackEvents(events.Items) {
		if e.Series != nil {
			t.Errorf("RolledBack event repeated %d times", e.Series.Count)
		}
	}
}

func deploymentImages(name string) func(ctx context.Context, ns string) ([]string, error) {
	return func(ctx context.Context, ns string) ([]string, error) {
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
			return nil, err
		}
		return []string{dep.Spec.Template.Spec.Containers[0].Image}, nil
	}
}

func statefulSetImages(name string) func(ctx context.Context, ns string) ([]string, error) {
	return func(ctx context.Context, ns string) ([]string, error) {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
			return nil, err
		}
		return []string{sts.Spec.Template.Spec.Containers[0].Image}, nil
	}
}

// podSetImages are the images of the PodSet's pods that are not being deleted: a PodSet has no
// template of its own, its pods are its children.
func podSetImages(name string) func(ctx context.Context, ns string) ([]string, error) {
	return func(ctx context.Context, ns string) ([]string, error) {
		ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(ps.SelectorLabels())); err != nil {
			return nil, err
		}
		var images []string
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil {
				images = append(images, pod.Spec.Containers[0].Image)
			}
		}
		return images, nil
	}
}
