//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

const podSetManifest = `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: PodSet
metadata:
  name: batch
spec:
  replicas: %d
  maxUnavailable: 1
  template:
    metadata:
      labels:
        tier: worker
    spec:
      containers:
        - name: main
          image: busybox:1.36
          command: ["sleep", "3600"]
`

func TestPodSetLifecycle(t *testing.T) {
	ns := newNamespace(t, "pset")
	kubectl(t, fmt.Sprintf(podSetManifest, 3), "apply", "-n", ns, "-f", "-")
	ps := waitPodSet(t, ns, 3, "busybox:1.36")
	if len(ps.Status.PodNames) != 3 {
		t.Errorf("podNames = %v", ps.Status.PodNames)
	}

	kubectl(t, "", "scale", "-n", ns, "podset/batch", "--replicas=5")
	waitPodSet(t, ns, 5, "busybox:1.36")
	kubectl(t, "", "scale", "-n", ns, "pset/batch", "--replicas=1")
	ps = waitPodSet(t, ns, 1, "busybox:1.36")

	victim := &corev1.Pod{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ps.Status.PodNames[0]}, victim); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(context.Background(), victim); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		back := &corev1.Pod{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(victim), back); err != nil {
			return err
		}
		if back.UID == victim.UID {
			return fmt.Errorf("pod %s not replaced yet", victim.Name)
		}
		return nil
	})
	waitPodSet(t, ns, 1, "busybox:1.36")

	kubectl(t, "", "scale", "-n", ns, "pset/batch", "--replicas=4")
	waitPodSet(t, ns, 4, "busybox:1.36")
	watcher := watchPods(t, ns, 4)
	kubectl(t, "", "patch", "-n", ns, "pset", "batch", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"busybox:1.37"}]`)
	waitPodSet(t, ns, 4, "busybox:1.37")
	maxPods, maxUnavailable := watcher.stop()
	t.Logf("rollout of 4 pods: at most %d pods and %d unavailable at once", maxPods, maxUnavailable)
	if maxUnavailable > 1 || maxPods > 4 {
		t.Errorf("rollout had %d pods unavailable and %d pods at once, want at most 1 and 4", maxUnavailable, maxPods)
	}

	out := kubectl(t, "", "get", "-n", ns, "appkeeper")
	if !strings.Contains(out, "batch") {
		t.Errorf("kubectl get appkeeper:\n%s", out)
	}
	kubectl(t, "", "delete", "-n", ns, "podset", "batch")
	deleted := time.Now()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		if n := len(pods.Items); n > 0 {
			return fmt.Errorf("%d pods left", n)
		}
		return nil
	})
	// The garbage collector only acts for a kind once it has discovered it, up to 30 s after the
	// CRD appeared, so this time is short only when the cluster has been up for a while.
	t.Logf("pods garbage-collected %s after the PodSet was deleted", time.Since(deleted).Round(time.Millisecond))
}

func TestPodSetScaleFromZeroTo200(t *testing.T) {
	ns := newNamespace(t, "pset200")
	kubectl(t, fmt.Sprintf(podSetManifest, 0), "apply", "-n", ns, "-f", "-")
	waitPodSet(t, ns, 0, "busybox:1.36")

	watcher := watchPods(t, ns, 200)
	start := time.Now()
	kubectl(t, "", "patch", "-n", ns, "pset", "batch", "--type=merge", "-p", `{"spec":{"replicas":200}}`)
	await.Eventually(t, 2*timeout, func(ctx context.Context) error {
		ps := &appsv1alpha1.PodSet{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "batch"}, ps); err != nil {
			return err
		}
		if ps.Status.ReadyReplicas != 200 {
			return fmt.Errorf("readyReplicas %d", ps.Status.ReadyReplicas)
		}
		return await.ConditionIs(ps.Status.Conditions, ps.Generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
	})
	elapsed := time.Since(start)
	waitPodSet(t, ns, 200, "busybox:1.36")
	maxPods, _ := watcher.stop()
	t.Logf("0 -> 200 pods: readyReplicas 200 and Available=True after %s; at most %d pods existed", elapsed.Round(time.Millisecond), maxPods)
	if maxPods > 200 {
		t.Errorf("%d pods existed at once, want at most 200", maxPods)
	}
}

// waitPodSet waits until the PodSet batch runs replicas Running and Ready pods of image, all from
// its current template, and reports so in its status for its current generation.
func waitPodSet(t *testing.T, ns string, replicas int, image string) *appsv1alpha1.PodSet {
	t.Helper()
	ps := &appsv1alpha1.PodSet{}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "batch"}, ps); err != nil {
			return err
		}
		s := ps.Status
		if int(s.ReadyReplicas) != replicas || int(s.UpdatedReplicas) != replicas || len(s.PodNames) != replicas {
			return fmt.Errorf("status ready %d updated %d podNames %d", s.ReadyReplicas, s.UpdatedReplicas, len(s.PodNames))
		}
		available := metav1.ConditionTrue
		if replicas == 0 {
			available = metav1.ConditionFalse
		}
		if err := await.ConditionIs(s.Conditions, ps.Generation, appsv1alpha1.ConditionAvailable, available); err != nil {
			return err
		}
		if err := await.ConditionIs(s.Conditions, ps.Generation, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse); err != nil {
			return err
		}
		pods := &corev1.PodList{}
		if err := k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(ps.SelectorLabels())); err != nil {
			return err
		}
		ready := 0
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && conditions.PodReady(&pod) && pod.Spec.Containers[0].Image == image {
				ready++
			}
		}
		if ready != replicas || len(pods.Items) != replicas {
			return fmt.Errorf("%d pods, %d running and ready with %s, want %d", len(pods.Items), ready, image, replicas)
		}
		return nil
	})
	return ps
}

// podWatcher replays every pod event of a namespace in order, so that it sees each state the pods
// went through, and keeps the largest number of pods and of unavailable pods at any one moment.
type podWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu             sync.Mutex
	maxPods        int
	maxUnavailable int
}

// watchPods starts a podWatcher for a PodSet that wants replicas pods.
func watchPods(t *testing.T, ns string, replicas int) *podWatcher {
	t.Helper()
	wc, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The watch starts where a List ends, so that it does not replay the pods one by one, which
	// would look like pods missing.
	list := &corev1.PodList{}
	if err := wc.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	pods := map[string]*corev1.Pod{}
	for i := range list.Items {
		pods[list.Items[i].Name] = &list.Items[i]
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := wc.Watch(ctx, &corev1.PodList{}, client.InNamespace(ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	pw := &podWatcher{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(pw.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(pods, pod.Name)
			} else {
				pods[pod.Name] = pod
			}
			serving := 0
			for _, p := range pods {
				if p.DeletionTimestamp == nil && conditions.PodReady(p) {
					serving++
				}
			}
			pw.mu.Lock()
			pw.maxPods = max(pw.maxPods, len(pods))
			pw.maxUnavailable = max(pw.maxUnavailable, replicas-serving)
			pw.mu.Unlock()
		}
	}()
	return pw
}

// stop ends the watch and returns the largest number of pods and of unavailable pods it saw.
func (pw *podWatcher) stop() (maxPods, maxUnavailable int) {
	pw.cancel()
	<-pw.done
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.maxPods, pw.maxUnavailable
}
