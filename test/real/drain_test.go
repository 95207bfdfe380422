//go:build real

package real

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// drain cordons node and evicts the pods of ns on it, each retried as kubectl drain retries an
// eviction a disruption budget refuses, until every one is gone; the node is uncordoned when the
// test ends. Only ns's pods go, so that the scenarios running beside this one keep theirs.
func drain(t *testing.T, ns, node string) {
	t.Helper()
	setUnschedulable(t, node, true)
	t.Cleanup(func() { setUnschedulable(t, node, false) })
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		left := 0
		for i := range pods.Items {
			if pod := &pods.Items[i]; pod.Spec.NodeName == node {
				left++
				if err := testcluster.Evict(ctx, k8s, pod); err != nil && !apierrors.IsTooManyRequests(err) && !apierrors.IsNotFound(err) {
					return err
				}
			}
		}
		if left > 0 {
			return fmt.Errorf("%d pods of %s still on %s", left, ns, node)
		}
		return nil
	})
}

// drainAsked drains node while a client asks url every 50 ms for an answer holding want, then
// waits for serving to return the pods that serve again: the test fails for any request that
// failed meanwhile, or a pod left on node.
func drainAsked(t *testing.T, ns, node, url, want string, serving func() []corev1.Pod) []corev1.Pod {
	t.Helper()
	p := startPoller(url, want)
	time.Sleep(time.Second)
	drained := time.Now()
	drain(t, ns, node)
	pods := serving()
	moved := time.Since(drained).Round(time.Millisecond)
	// The evicted pod's connections drain after it leaves the Service: keep asking a little longer.
	time.Sleep(2 * time.Second)
	ok, failures, _ := p.stop()
	t.Logf("%s drained, every pod serving again on other nodes %s later; %d requests answered, %d failed", node, moved, ok, len(failures))
	if len(failures) > 0 {
		t.Errorf("%d requests to %s failed during the drain:\n%s", len(failures), url, strings.Join(failures, "\n"))
	}
	for _, pod := range pods {
		if pod.Spec.NodeName == node {
			t.Errorf("pod %s is on %s, drained", pod.Name, node)
		}
	}
	return pods
}

// setUnschedulable cordons node, as kubectl cordon does, or uncordons it.
func setUnschedulable(t *testing.T, node string, cordoned bool) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, cordoned))
	if err := k8s.Patch(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}
