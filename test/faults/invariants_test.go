//go:build faults

package faults

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/operator"
)

// sampleInterval is how often the invariants are sampled while a scenario runs.
const sampleInterval = 100 * time.Millisecond

// invariants samples, from watches on the scenario's namespace, what must hold at every moment:
// no PodSet runs more pods than its spec asks for, and a Secret or PVC, once seen, is never
// replaced by another of the same name, nor a value of a Secret rewritten.
type invariants struct {
	ns     string
	cache  cache.Cache
	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	samples    int
	violations []string
	secrets    map[string]seenSecret
	claims     map[string]types.UID
	// replicas holds the replicas the test asked of each PodSet it scaled: the watch on PodSets
	// can lag behind the one on pods, after an outage most of all.
	replicas map[string]int
}

type seenSecret struct {
	uid  types.UID
	data map[string][]byte
}

// watchInvariants starts sampling ns until the test ends or stop is called.
func watchInvariants(t *testing.T, ns string) *invariants {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	podSetPods := labels.SelectorFromSet(labels.Set{appsv1alpha1.LabelName: "podset"})
	c, err := cache.New(cluster.Config, cache.Options{
		Scheme:            operator.Scheme(),
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject:          map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: podSetPods}},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := &invariants{ns: ns, cache: c, cancel: cancel, done: make(chan struct{}),
		secrets: map[string]seenSecret{}, claims: map[string]types.UID{}, replicas: map[string]int{}}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		t.Fatal("the invariants' cache did not start")
	}
	// The first read of each kind starts its watch and waits for it to sync.
	if err := w.sample(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	go w.run(ctx)
	t.Cleanup(w.stop)
	return w
}

func (w *invariants) run(ctx context.Context) {
	defer close(w.done)
	tick := time.NewTicker(sampleInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_ = w.sample(ctx)
		}
	}
}

func (w *invariants) stop() {
	w.cancel()
	<-w.done
}

func (w *invariants) sample(ctx context.Context) error {
	podSets, pods := &appsv1alpha1.PodSetList{}, &corev1.PodList{}
	secrets, claims := &corev1.SecretList{}, &corev1.PersistentVolumeClaimList{}
	for _, list := range []client.ObjectList{podSets, pods, secrets, claims} {
		if err := w.cache.List(ctx, list, client.InNamespace(w.ns)); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	for i := range podSets.Items {
		ps := &podSets.Items[i]
		running := 0
		for j := range pods.Items {
			if pods.Items[j].DeletionTimestamp == nil && metav1.IsControlledBy(&pods.Items[j], ps) {
				running++
			}
		}
		if replicas := max(int(ps.DesiredReplicas()), w.replicas[ps.Name]); running > replicas {
			w.violate("PodSet %s ran %d pods, over its %d replicas", ps.Name, running, replicas)
		}
	}
	for _, s := range secrets.Items {
		seen, ok := w.secrets[s.Name]
		switch {
		case !ok:
			w.secrets[s.Name] = seenSecret{uid: s.UID, data: s.Data}
		case seen.uid != s.UID:
			w.violate("Secret %s was replaced by another of the same name", s.Name)
		default:
			w.compareSecret(s, seen)
		}
	}
	for _, c := range claims.Items {
		if uid, ok := w.claims[c.Name]; !ok {
			w.claims[c.Name] = c.UID
		} else if uid != c.UID {
			w.violate("PVC %s was recreated", c.Name)
		}
	}
	return nil
}

// asked records that the PodSet name is asked for replicas, before the change is sent.
func (w *invariants) asked(name string, replicas int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.replicas[name] = replicas
}

// compareSecret records a violation when a value seen in s before has changed or gone. A generated
// Secret is created with its passwords alone, and the values that say where to connect are added
// next: keys may be added, never changed.
func (w *invariants) compareSecret(s corev1.Secret, seen seenSecret) {
	for key, value := range seen.data {
		if now, ok := s.Data[key]; !ok || !bytes.Equal(now, value) {
			w.violate("Secret %s had its key %s rewritten", s.Name, key)
		}
	}
	for key, value := range s.Data {
		if _, ok := seen.data[key]; !ok {
			seen.data[key] = value
		}
	}
}

// violate records a violation once.
func (w *invariants) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, v := range w.violations {
		if v == msg {
			return
		}
	}
	w.violations = append(w.violations, msg)
}

// check stops the sampling and fails the test for every violation it saw, and for every Secret
// or PVC it saw that is gone from the API server, unless mayGo says it was meant to go.
func (w *invariants) check(t *testing.T, mayGo func(kind, name string) bool) {
	t.Helper()
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.samples < 2 {
		t.Errorf("the invariants were sampled only %d times", w.samples)
	}
	for _, v := range w.violations {
		t.Error(v)
	}
	ctx := context.Background()
	for kind, names := range map[string][]string{secretKind: keys(w.secrets), claimKind: keys(w.claims)} {
		for _, name := range names {
			if mayGo != nil && mayGo(kind, name) {
				continue
			}
			var obj client.Object = &corev1.Secret{}
			if kind == claimKind {
				obj = &corev1.PersistentVolumeClaim{}
			}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, obj); apierrors.IsNotFound(err) {
				t.Errorf("%s %s is lost", kind, name)
			} else if err != nil {
				t.Error(err)
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
