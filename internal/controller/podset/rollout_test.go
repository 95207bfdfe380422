package podset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/controller/podset"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

func scale(t *testing.T, ns string, replicas int32) {
	t.Helper()
	ps := &appsv1alpha1.PodSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	if err := k8s.SubResource("scale").Update(context.Background(), ps, client.WithSubResourceBody(s)); err != nil {
		t.Fatal(err)
	}
}

func TestScaleDownRemovesNotReadyPodsThenTheNewest(t *testing.T) {
	ns := newNamespace(t)
	create(t, newPodSet(ns, 4, "busybox:1.36"))
	waitPods(t, ns, "web-0", "web-1", "web-2", "web-3")
	markReady(t, ns, "web-0", "web-2", "web-3")
	await.Eventually(t, timeout, func(context.Context) error {
		if got := getPodSet(t, ns).Status.ReadyReplicas; got != 3 {
			return fmt.Errorf("readyReplicas %d", got)
		}
		return nil
	})

	scale(t, ns, 2)
	waitPods(t, ns, "web-0", "web-2")
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventScaled)

	// The hole at web-1 is filled first when scaling up again.
	scale(t, ns, 3)
	waitPods(t, ns, "web-0", "web-1", "web-2")

	scale(t, ns, 0)
	waitPods(t, ns)
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse)
	if c := getPodSet(t, ns).Status.Conditions; !strings.Contains(fmt.Sprint(c), appsv1alpha1.ReasonScaledToZero) {
		t.Errorf("conditions = %+v, want Available reason ScaledToZero", c)
	}
}

// TestTemplateChangeReplacesMaxUnavailableAtATime plays the kubelet: it makes each new pod ready
// only after checking that the PodSet replaced no more pods than maxUnavailable allows.
func TestTemplateChangeReplacesMaxUnavailableAtATime(t *testing.T) {
	ns := newNamespace(t)
	create(t, newPodSet(ns, 3, "busybox:1.36"))
	waitPods(t, ns, "web-0", "web-1", "web-2")
	markReady(t, ns, "web-0", "web-1", "web-2")
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)

	ps := getPodSet(t, ns)
	ps.Spec.Template.Spec.Containers[0].Image = "busybox:1.37"
	if err := k8s.Update(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 3; round++ {
		var fresh string
		await.Eventually(t, timeout, func(ctx context.Context) error {
			pods, err := podsOf(ctx, ns)
			if err != nil {
				return err
			}
			updated, notReady := 0, 0
			for name, pod := range pods {
				if pod.Spec.Containers[0].Image == "busybox:1.37" {
					updated++
				}
				if pod.Status.Phase != corev1.PodRunning {
					notReady, fresh = notReady+1, name
				}
			}
			if updated != round || len(pods) != 3 {
				return fmt.Errorf("round %d: %d pods, %d updated", round, len(pods), updated)
			}
			if notReady != 1 {
				t.Fatalf("round %d: %d pods not ready, want 1", round, notReady)
			}
			return nil
		})
		// Nothing more is replaced while the new pod is not ready.
		time.Sleep(300 * time.Millisecond)
		if pods, _ := podsOf(context.Background(), ns); len(pods) != 3 {
			t.Fatalf("round %d: a second pod was replaced before the first was ready: %v", round, sortedNames(pods))
		}
		markReady(t, ns, fresh)
	}
	waitCondition(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse)
	if got := getPodSet(t, ns).Status; got.UpdatedReplicas != 3 || got.ReadyReplicas != 3 {
		t.Errorf("status = %+v", got)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventUpgrading, appsv1alpha1.EventUpgraded)
}

// staleCache shows the pods as they were before the last pass, as a cache that lags behind does.
type staleCache struct {
	client.Client
	pods []corev1.Pod
}

func (c staleCache) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	list.(*corev1.PodList).Items = c.pods
	return nil
}

func TestStaleCacheNeverCreatesExtraPods(t *testing.T) {
	ns := newNamespace(t)
	create(t, newPodSet(ns, 3, "busybox:1.36"))
	before := waitPods(t, ns, "web-0", "web-1", "web-2")

	// A second reconciler whose cache has not seen web-1 and web-2 yet, or no pod at all.
	for _, seen := range [][]corev1.Pod{{before["web-0"]}, nil} {
		r := &podset.Reconciler{
			Client:   kube.Client{Client: staleCache{k8s, seen}, APIReader: k8s, FieldOwner: "appkeeper-podset"},
			Recorder: events.NewFakeRecorder(10),
		}
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "web"}}); err != nil {
			t.Fatalf("reconcile with %d pods seen: %v", len(seen), err)
		}
	}
	list := &corev1.PodList{}
	if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 {
		t.Fatalf("%d pods, want 3", len(list.Items))
	}
	for _, pod := range list.Items {
		if pod.UID != before[pod.Name].UID {
			t.Errorf("pod %s was replaced", pod.Name)
		}
	}
	if got := getPodSet(t, ns).Status; got.Replicas != 3 {
		t.Errorf("status after the stale passes = %+v", got)
	}
}

func TestIdlePodSetMakesNoWrites(t *testing.T) {
	ns := newNamespace(t)
	create(t, newPodSet(ns, 2, "busybox:1.36"))
	waitPods(t, ns, "web-0", "web-1")
	markReady(t, ns, "web-0", "web-1")
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)

	versions := func() string {
		list := &corev1.PodList{}
		if err := k8s.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		v := []string{getPodSet(t, ns).ResourceVersion}
		for _, pod := range list.Items {
			v = append(v, pod.Name+"@"+pod.ResourceVersion)
		}
		return strings.Join(v, "/")
	}
	await.RequireUnchanged(t, "an idle PodSet's objects", versions)
}
