package statuspatch_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/appkeeper/appkeeper/internal/statuspatch"
)

// A copy read before the status write that the pass before made is behind, until the cache shows
// that status; a pass on it would judge from the state before that write.
func TestStatusBehindTheLastWrite(t *testing.T) {
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
	ctx := context.Background()
	status := func(p *corev1.Pod) any { return p.Status }
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "stale-", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if statuspatch.Behind(pod, pod.Status) {
		t.Fatal("behind before any status write")
	}
	stale := pod.DeepCopy()
	written := pod.DeepCopy()
	written.Status.Message = "written by the pass before"
	if err := statuspatch.Patch(ctx, k8s, pod, written, status); err != nil {
		t.Fatal(err)
	}
	if !statuspatch.Behind(stale, stale.Status) {
		t.Error("a copy read before the write is not behind")
	}
	caughtUp := &corev1.Pod{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), caughtUp); err != nil {
		t.Fatal(err)
	}
	if statuspatch.Behind(caughtUp, caughtUp.Status) {
		t.Error("the copy holding the written status is behind")
	}
	statuspatch.Forget(pod.UID)
}
