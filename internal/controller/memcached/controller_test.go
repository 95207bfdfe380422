package memcached_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/admission"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

const timeout = 20 * time.Second

// newNamespace gives each test a namespace of its own.
func newNamespace(t *testing.T) string {
	t.Helper()
	return testcluster.NewNamespace(t, k8s, "mc")
}

func createMemcached(t *testing.T, ns string, size int32, mutate func(*appsv1alpha1.Memcached)) *appsv1alpha1.Memcached {
	t.Helper()
	mc := &appsv1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns},
		Spec:       appsv1alpha1.MemcachedSpec{Size: ptr.To(size)},
	}
	if mutate != nil {
		mutate(mc)
	}
	if err := k8s.Create(context.Background(), mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

func get[T client.Object](t *testing.T, ns, name string, obj T) T {
	t.Helper()
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// childrenExist waits for the Memcached's StatefulSet and Service and returns them.
func childrenExist(t *testing.T, ns string) (*appsv1.StatefulSet, *corev1.Service) {
	t.Helper()
	sts, svc := &appsv1.StatefulSet{}, &corev1.Service{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, sts); err != nil {
			return err
		}
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, svc)
	})
	return sts, svc
}

// runMembers does what the StatefulSet controller and the kubelet would: it makes the pods
// cache-0 to cache-<n-1> from the StatefulSet's template, marks them ready and writes the
// StatefulSet's status.
func runMembers(t *testing.T, ns string, n int) {
	t.Helper()
	ctx := context.Background()
	sts := get(t, ns, "cache", &appsv1.StatefulSet{})
	for i := range n {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("cache-%d", i), Namespace: ns, Labels: sts.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))},
			},
			Spec: sts.Spec.Template.Spec,
		}
		if err := k8s.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		setPodReady(t, ns, pod.Name, true)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, sts); err != nil {
			return err
		}
		r := int32(n)
		sts.Status = appsv1.StatefulSetStatus{
			ObservedGeneration: sts.Generation, Replicas: r, ReadyReplicas: r, AvailableReplicas: r, UpdatedReplicas: r,
			CurrentRevision: "cache-1", UpdateRevision: "cache-1",
		}
		return k8s.Status().Update(ctx, sts)
	})
}

func setPodReady(t *testing.T, ns, name string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pod := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return err
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
		return k8s.Status().Update(ctx, pod)
	})
}

// waitStatus waits until the Memcached reports nodes and condType at status for its generation.
func waitStatus(t *testing.T, ns string, nodes []string, condType string, status metav1.ConditionStatus) *appsv1alpha1.Memcached {
	t.Helper()
	mc := &appsv1alpha1.Memcached{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cache"}, mc); err != nil {
			return err
		}
		if !slices.Equal(mc.Status.Nodes, nodes) {
			return fmt.Errorf("status.nodes = %q, want %q", mc.Status.Nodes, nodes)
		}
		return await.ConditionIs(mc.Status.Conditions, mc.Generation, condType, status)
	})
	return mc
}

func TestChildrenAreOwnedAndStatusFollowsThem(t *testing.T) {
	ns := newNamespace(t)
	mc := createMemcached(t, ns, 3, func(mc *appsv1alpha1.Memcached) {
		mc.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
	})
	sts, svc := childrenExist(t, ns)
	for _, child := range []client.Object{sts, svc} {
		owner := metav1.GetControllerOf(child)
		if owner == nil || owner.UID != mc.UID || owner.Kind != "Memcached" {
			t.Errorf("%T owner = %+v, want the Memcached", child, owner)
		}
	}
	c := sts.Spec.Template.Spec.Containers[0]
	if *sts.Spec.Replicas != 3 || sts.Spec.ServiceName != "cache" || sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement ||
		c.Image != appsv1alpha1.DefaultMemcachedImage || !slices.Equal(c.Args, []string{"-p", "11211", "-U", "0", "-m", "102"}) {
		t.Errorf("statefulset replicas/serviceName/policy/image/args = %d/%s/%s/%s/%q",
			*sts.Spec.Replicas, sts.Spec.ServiceName, sts.Spec.PodManagementPolicy, c.Image, c.Args)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Ports[0].Port != 11211 {
		t.Errorf("service clusterIP/port = %s/%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	}
	waitStatus(t, ns, nil, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse)

	runMembers(t, ns, 3)
	waitStatus(t, ns, []string{"cache-0", "cache-1", "cache-2"}, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	// Available follows the pods; Progressing ends once the StatefulSet reports the rollout done.
	got := waitStatus(t, ns, []string{"cache-0", "cache-1", "cache-2"}, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse)
	if got.Status.Size != 3 || got.Status.ReadyReplicas != 3 || got.Status.Selector == "" {
		t.Errorf("status = %+v", got.Status)
	}

	// A member that stops being ready leaves status.nodes at once.
	setPodReady(t, ns, "cache-1", false)
	waitStatus(t, ns, []string{"cache-0", "cache-2"}, appsv1alpha1.ConditionAvailable, metav1.ConditionFalse)
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventCreated)
}

func TestScaledToZero(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 0, nil)
	childrenExist(t, ns)
	runMembers(t, ns, 0)
	mc := waitStatus(t, ns, nil, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse)
	c := meta.FindStatusCondition(mc.Status.Conditions, appsv1alpha1.ConditionAvailable)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != appsv1alpha1.ReasonScaledToZero || c.Message == "" {
		t.Errorf("Available = %+v, want False, ScaledToZero, with a message", c)
	}
}

func TestScaleSubresource(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 1, nil)
	childrenExist(t, ns)
	mc := &appsv1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns}}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: 4}}
	if err := k8s.SubResource("scale").Update(context.Background(), mc, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		if sts := get(t, ns, "cache", &appsv1.StatefulSet{}); *sts.Spec.Replicas != 4 {
			return fmt.Errorf("statefulset replicas = %d", *sts.Spec.Replicas)
		}
		return nil
	})
	runMembers(t, ns, 4)
	await.Eventually(t, timeout, func(ctx context.Context) error {
		got := &autoscalingv1.Scale{}
		if err := k8s.SubResource("scale").Get(ctx, mc, got); err != nil {
			return err
		}
		if got.Status.Replicas != 4 || !strings.Contains(got.Status.Selector, "app.kubernetes.io/instance=cache") {
			return fmt.Errorf("scale status = %+v", got.Status)
		}
		return nil
	})
	await.WantEvents(t, k8s, ns, timeout, appsv1alpha1.EventScaled)
}

func TestDriftIsRestored(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 2, nil)
	sts, svc := childrenExist(t, ns)

	pod := &sts.Spec.Template.Spec
	sts.Spec.Replicas = ptr.To[int32](7)
	pod.Containers[0].Image = "evil:latest"
	pod.Containers[0].Args = []string{"-m", "4096"}
	pod.SecurityContext.RunAsNonRoot = ptr.To(false)
	delete(sts.Labels, appsv1alpha1.LabelManagedBy)
	if err := k8s.Update(context.Background(), sts); err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports[0].Port = 9999
	svc.Spec.Selector = map[string]string{"app": "other"}
	if err := k8s.Update(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(context.Context) error {
		sts := get(t, ns, "cache", &appsv1.StatefulSet{})
		pod := sts.Spec.Template.Spec
		c := pod.Containers[0]
		if *sts.Spec.Replicas != 2 || c.Image != appsv1alpha1.DefaultMemcachedImage || !slices.Equal(c.Args, []string{"-p", "11211", "-U", "0"}) ||
			!*pod.SecurityContext.RunAsNonRoot || sts.Labels[appsv1alpha1.LabelManagedBy] != appsv1alpha1.ManagedByValue {
			return fmt.Errorf("statefulset not restored: replicas %d image %s args %q labels %v", *sts.Spec.Replicas, c.Image, c.Args, sts.Labels)
		}
		svc := get(t, ns, "cache", &corev1.Service{})
		if svc.Spec.Ports[0].Port != 11211 || svc.Spec.Selector[appsv1alpha1.LabelInstance] != "cache" || svc.Spec.Selector["app"] != "" {
			return fmt.Errorf("service not restored: port %d selector %v", svc.Spec.Ports[0].Port, svc.Spec.Selector)
		}
		return nil
	})
}

func TestDeletedChildrenAreRecreated(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 1, nil)
	sts, svc := childrenExist(t, ns)
	for _, child := range []client.Object{svc, sts} {
		if err := k8s.Delete(context.Background(), child); err != nil {
			t.Fatal(err)
		}
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		newSts, newSvc := &appsv1.StatefulSet{}, &corev1.Service{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(sts), newSts); err != nil {
			return err
		}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(svc), newSvc); err != nil {
			return err
		}
		if newSts.UID == sts.UID || newSvc.UID == svc.UID {
			return fmt.Errorf("children not replaced yet")
		}
		return nil
	})
}

func TestIdleMemcachedMakesNoWrites(t *testing.T) {
	ns := newNamespace(t)
	createMemcached(t, ns, 2, nil)
	childrenExist(t, ns)
	runMembers(t, ns, 2)
	waitStatus(t, ns, []string{"cache-0", "cache-1"}, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)

	versions := func() string {
		return strings.Join([]string{
			get(t, ns, "cache", &appsv1alpha1.Memcached{}).ResourceVersion,
			get(t, ns, "cache", &appsv1.StatefulSet{}).ResourceVersion,
			get(t, ns, "cache", &corev1.Service{}).ResourceVersion,
		}, "/")
	}
	await.RequireUnchanged(t, "an idle Memcached's objects", versions)
}

func TestInvalidSpecsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidSpecsRejected(t, k8s, ns, "Memcached")
}

func TestInvalidUpdatesAreRejected(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireInvalidUpdatesRejected(t, k8s, ns, "Memcached")
}

func TestValidUpdatesAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	admission.RequireValidUpdatesAccepted(t, k8s, ns, "Memcached")
}
