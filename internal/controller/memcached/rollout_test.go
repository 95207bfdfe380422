package memcached

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/memcached"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// TestRolledBackTargetBuildsTheGoodMembers checks that podFields takes every field that makes the
// members from the good spec, so that a rollback rebuilds its template exactly, and nothing else.
func TestRolledBackTargetBuildsTheGoodMembers(t *testing.T) {
	good := &appsv1alpha1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "ns"},
		Spec:       appsv1alpha1.MemcachedSpec{Size: ptr.To[int32](3), Image: "memcached:1.6.38-alpine", Port: 11211},
	}
	spec := appsv1alpha1.MemcachedSpec{
		Size: ptr.To[int32](5), Image: "memcached:broken", Port: 11311, MemoryMB: ptr.To[int32](64), MaxConnections: ptr.To[int32](100),
		Resources:          corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		PodSecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
		SecurityContext:    &corev1.SecurityContext{Privileged: ptr.To(false)},
		NodeSelector:       map[string]string{"disk": "ssd"}, Tolerations: []corev1.Toleration{{Key: "dedicated"}},
		Affinity: &corev1.Affinity{}, PodLabels: map[string]string{"team": "a"}, PodAnnotations: map[string]string{"note": "x"},
		Upgrade: appsv1alpha1.UpgradePolicy{ProgressDeadlineSeconds: ptr.To[int32](60)},
	}
	d := rollout.Decision{RollBack: true, Status: appsv1alpha1.RolloutStatus{
		LastGood: &appsv1alpha1.GoodRevision{Name: revision(good).Name, Spec: rollout.Snapshot(good.Spec)},
	}}
	target := good.DeepCopy()
	var err error
	if target.Spec, err = rollout.Target(d, spec, podFields); err != nil {
		t.Fatal(err)
	}
	if got, want := rollout.Hash(resources.StatefulSet(target).Spec.Template), revision(good).Name; got != want {
		t.Errorf("the rolled back members are revision %s, want the good %s", got, want)
	}
	if *target.Spec.Size != 5 || *target.Spec.Upgrade.ProgressDeadlineSeconds != 60 {
		t.Errorf("size/deadline = %d/%d, want the spec's 5/60", *target.Spec.Size, *target.Spec.Upgrade.ProgressDeadlineSeconds)
	}
}
