package podset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/admission"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

const timeout = 20 * time.Second

func newNamespace(t *testing.T) string {
	t.Helper()
	return testcluster.NewNamespace(t, k8s, "pset")
}

func newPodSet(ns string, replicas int32, image string) *appsv1alpha1.PodSet {
	return &appsv1alpha1.PodSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1alpha1.PodSetSpec{
			Replicas: ptr.To(replicas),
			Template: appsv1alpha1.PodSetTemplate{
				Metadata: appsv1alpha1.PodSetTemplateMetadata{
					Labels:      map[string]string{"tier": "cache"},
					Annotations: map[string]string{"note": "kept"},
				},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image, Command: []string{"sleep", "3600"}}}},
			},
		},
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func getPodSet(t *testing.T, ns string) *appsv1alpha1.PodSet {
	t.Helper()
	ps := &appsv1alpha1.PodSet{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, ps); err != nil {
		t.Fatal(err)
	}
	return ps
}

// podsOf returns the pods in ns that the PodSet web controls and that are not terminating, by name.
func podsOf(ctx context.Context, ns string) (map[string]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]corev1.Pod{}
	for _, pod := range list.Items {
		owner := metav1.GetControllerOf(&pod)
		if owner != nil && owner.Kind == "PodSet" && owner.Name == "web" && pod.DeletionTimestamp == nil {
			out[pod.Name] = pod
		}
	}
	return out, nil
}

// waitPods waits until the PodSet's pods are exactly names and returns them.
func waitPods(t *testing.T, ns string, names ...string) map[string]corev1.Pod {
	t.Helper()
	var pods map[string]corev1.Pod
	await.Eventually(t, timeout, func(ctx context.Context) error {
		var err error
		if pods, err = podsOf(ctx, ns); err != nil {
			return err
		}
		if got := sortedNames(pods); !slices.Equal(got, names) {
			return fmt.Errorf("pods %v, want %v", got, names)
		}
		return nil
	})
	return pods
}

func sortedNames(pods map[string]corev1.Pod) []string {
	names := make([]string, 0, len(pods))
	for name := range pods {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// markReady writes the status a kubelet would write once the pods' containers are ready.
func markReady(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		pod := &corev1.Pod{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			t.Fatal(err)
		}
		setPhase(t, pod, corev1.PodRunning, corev1.ConditionTrue)
	}
}

func setPhase(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase, ready corev1.ConditionStatus) {
	t.Helper()
	pod.Status.Phase = phase
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

func waitCondition(t *testing.T, ns, condType string, status metav1.ConditionStatus) {
	t.Helper()
	await.Eventually(t, timeout, func(context.Context) error {
		ps := getPodSet(t, ns)
		return await.ConditionIs(ps.Status.Conditions, ps.Generation, condType, status)
	})
}

func TestPodsAreCreatedOwnedAndReported(t *testing.T) {
	ns := newNamespace(t)
	ps := newPodSet(ns, 3, "busybox:1.36")
	create(t, ps)
	pods := waitPods(t, ns, "web-0", "web-1", "web-2")
	hash := pods["web-0"].Annotations[appsv1alpha1.AnnotationTemplateHash]
	for name, pod := range pods {
		owner := metav1.GetControllerOf(&pod)
		if owner == nil || owner.UID != ps.UID || owner.BlockOwnerDeletion == nil || !*owner.BlockOwnerDeletion {
			t.Errorf("%s: controller reference %+v, want the PodSet", name, owner)
		}
		l := pod.Labels
		if l["tier"] != "cache" || l[appsv1alpha1.LabelName] != "podset" || l[appsv1alpha1.LabelInstance] != "web" ||
			l[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
			t.Errorf("%s: labels %v", name, l)
		}
		if hash == "" || pod.Annotations[appsv1alpha1.AnnotationTemplateHash] != hash || pod.Annotations["note"] != "kept" {
			t.Errorf("%s: annotations %v", name, pod.Annotations)
		}
	}
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse)
	got := getPodSet(t, ns)
	if got.Status.Replicas != 3 || got.Status.ReadyReplicas != 0 || !slices.Equal(got.Status.PodNames, []string{"web-0", "web-1", "web-2"}) ||
		got.Status.Selector != "app.kubernetes.io/instance=web,app.kubernetes.io/name=podset" {
		t.Errorf("status = %+v", got.Status)
	}

	markReady(t, ns, "web-0", "web-1", "web-2")
	waitCondition(t, ns, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	waitCondition(t, ns, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse)
	if got := getPodSet(t, ns); got.Status.ReadyReplicas != 3 || got.Status.UpdatedReplicas != 3 {
		t.Errorf("status = %+v", got.Status)
	}
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventCreated)
}

func TestDeletedAndFinishedPodsAreReplaced(t *testing.T) {
	ns := newNamespace(t)
	create(t, newPodSet(ns, 3, "busybox:1.36"))
	before := waitPods(t, ns, "web-0", "web-1", "web-2")

	if err := k8s.Delete(context.Background(), ptr.To(before["web-0"])); err != nil {
		t.Fatal(err)
	}
	setPhase(t, ptr.To(before["web-1"]), corev1.PodFailed, corev1.ConditionFalse)
	setPhase(t, ptr.To(before["web-2"]), corev1.PodSucceeded, corev1.ConditionFalse)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		after, err := podsOf(ctx, ns)
		if err != nil {
			return err
		}
		for name, old := range before {
			if pod, ok := after[name]; !ok || pod.UID == old.UID || pod.Status.Phase != corev1.PodPending {
				return fmt.Errorf("%s not replaced yet", name)
			}
		}
		return nil
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventReplaced)
}

func TestForeignPodsAreLeftAlone(t *testing.T) {
	ns := newNamespace(t)
	labelled := map[string]string{
		appsv1alpha1.LabelName: "podset", appsv1alpha1.LabelInstance: "web", appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue,
	}
	foreign := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36"}}},
		}
	}
	// web-0 is in the operator's cache, web-1 is not (no managed-by label), web-9 is beyond replicas.
	pods := []*corev1.Pod{foreign("web-0", labelled), foreign("web-1", nil), foreign("web-9", labelled)}
	for _, pod := range pods {
		create(t, pod)
	}
	create(t, newPodSet(ns, 3, "busybox:1.36"))

	waitPods(t, ns, "web-2")
	await.Eventually(t, timeout, func(context.Context) error {
		ps := getPodSet(t, ns)
		if err := await.ConditionIs(ps.Status.Conditions, ps.Generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(ps.Status.Conditions, appsv1alpha1.ConditionDegraded); !strings.Contains(c.Message, "web-0, web-1") {
			return fmt.Errorf("Degraded does not name web-0 and web-1: %s", c.Message)
		}
		return nil
	})
	if got := getPodSet(t, ns).Status; got.Replicas != 1 || !slices.Equal(got.PodNames, []string{"web-2"}) {
		t.Errorf("status counts foreign pods: %+v", got)
	}
	for range 10 {
		time.Sleep(200 * time.Millisecond)
		for _, pod := range pods {
			live := &corev1.Pod{}
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), live); err != nil || live.UID != pod.UID ||
				live.DeletionTimestamp != nil || len(live.OwnerReferences) > 0 {
				t.Fatalf("foreign pod %s touched: %v %+v", pod.Name, err, live.ObjectMeta)
			}
		}
	}

	// Once the names are free, the PodSet takes them.
	for _, pod := range pods[:2] {
		if err := k8s.Delete(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
	waitPods(t, ns, "web-0", "web-1", "web-2")
	waitCondition(t, ns, appsv1alpha1.ConditionDegraded, metav1.ConditionFalse)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pods[2]), &corev1.Pod{}); err != nil {
		t.Errorf("foreign pod web-9: %v", err)
	}
}

func TestInvalidSpecsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidSpecsRejected(t, k8s, ns, "PodSet")
	t.Run("name longer than a label value", func(t *testing.T) {
		ps := newPodSet(ns, 1, "busybox:1.36")
		ps.Name = strings.Repeat("a", 64)
		err := k8s.Create(context.Background(), ps)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.name must be a DNS-1035 label of at most 52 characters") {
			t.Errorf("create = %v, want Invalid naming metadata.name", err)
		}
	})
}

func TestInvalidUpdatesAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidUpdatesRejected(t, k8s, ns, "PodSet")
}

func TestValidUpdatesAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireValidUpdatesAccepted(t, k8s, ns, "PodSet")
}
