package reconcile_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/appkeeper/appkeeper/internal/reconcile"
)

// A pass that reads an object from a cache that has not caught up with the status the pass before
// wrote still leaves the server with the status it computed.
func TestStatusWriteAfterAStaleRead(t *testing.T) {
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := reconcile.Client{Client: k8s, APIReader: k8s, FieldOwner: "appkeeper-test"}
	ctx := context.Background()
	status := func(p *corev1.Pod) any { return p.Status }
	for _, tt := range []struct {
		name string
		next corev1.PodStatus
	}{
		{"the status the cache shows", corev1.PodStatus{}},
		{"a status that shares a field with the cache's", corev1.PodStatus{Reason: "Second"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "stale-", Namespace: "default"},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			}
			if err := k8s.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			stale := pod.DeepCopy()
			first := pod.DeepCopy()
			first.Status.Message = "written by the pass before"
			if err := reconcile.PatchStatus(ctx, c, pod, first, status); err != nil {
				t.Fatal(err)
			}
			second := stale.DeepCopy()
			second.Status = tt.next
			if err := reconcile.PatchStatus(ctx, c, stale, second, status); err != nil {
				t.Fatal(err)
			}
			got := &corev1.Pod{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Message != "" || got.Status.Reason != tt.next.Reason {
				t.Errorf("status message %q reason %q on the server, want message %q reason %q: the write read the stale copy",
					got.Status.Message, got.Status.Reason, "", tt.next.Reason)
			}
		})
	}
}
