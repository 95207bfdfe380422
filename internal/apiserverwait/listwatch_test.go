package apiserverwait_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/appkeeper/appkeeper/internal/apiserverwait"
)

type callResult[T any] struct {
	value T
	err   error
}

// call runs f in the background; its result arrives on the returned channel.
func call[T any](f func() (T, error)) <-chan callResult[T] {
	out := make(chan callResult[T], 1)
	go func() {
		v, err := f()
		out <- callResult[T]{v, err}
	}()
	return out
}

func receive[T any](t *testing.T, results <-chan callResult[T], what string) T {
	t.Helper()
	select {
	case r := <-results:
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
		return r.value
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer within 30 s of the API server being ready", what)
	}
	panic("unreachable")
}

func configMapsOf(t *testing.T, cfg *rest.Config, ns string) *toolscache.ListWatch {
	t.Helper()
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return toolscache.NewListWatchFromClient(clientset.CoreV1().RESTClient(), "configmaps", ns, fields.Everything())
}

func TestListerWatcher(t *testing.T) {
	cp := startControlPlane(t)
	t.Run("an error of a ready API server passes at once", func(t *testing.T) { errorOfReadyAPIServer(t, cp) })
	t.Run("a call made while the API server is down waits for it", func(t *testing.T) { callsWaitForAPIServer(t, cp) })
}

// A watch that the outage breaks ends as expired at once; a List and a Watch that start while the
// API server is down answer once it is back, as if it had never been away, and a wait ends with its
// caller's context. The plain ListWatch fails at once.
func callsWaitForAPIServer(t *testing.T, cp *controlPlane) {
	outage, err := apiserverwait.New(cp.admin, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	plain := configMapsOf(t, cp.admin, ns)
	lw := outage.ListerWatcher(plain)
	ctx := t.Context()
	broken, err := lw.WatchWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer broken.Stop()

	cp.killAPIServer(t)
	wantExpired(t, broken)
	if _, err := plain.ListWithContext(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("a plain List succeeded with the API server down")
	}
	listed := call(func() (runtime.Object, error) { return lw.ListWithContext(ctx, metav1.ListOptions{}) })
	watched := call(func() (watch.Interface, error) { return lw.WatchWithContext(ctx, metav1.ListOptions{}) })
	stopped, stop := context.WithCancel(ctx)
	abandoned := call(func() (watch.Interface, error) { return lw.WatchWithContext(stopped, metav1.ListOptions{}) })
	select {
	case r := <-listed:
		t.Fatalf("List returned while the API server was down: %v", r.err)
	case r := <-watched:
		t.Fatalf("Watch returned while the API server was down: %v", r.err)
	case r := <-abandoned:
		t.Fatalf("Watch returned while the API server was down: %v", r.err)
	case <-time.After(2 * time.Second):
	}
	stop()
	select {
	case r := <-abandoned:
		if r.err == nil {
			t.Fatal("a Watch whose context ended while waiting returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a Watch whose context ended still waits for the API server")
	}

	cp.startAPIServer(t)
	receive(t, listed, "List")
	w := receive(t, watched, "Watch")
	defer w.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-the-outage"}}
	if _, err := kubernetes.NewForConfigOrDie(cp.admin).CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantEvent(t, w, cm.Name)
}

// wantExpired waits for w to end as expired, which makes a Reflector list again.
func wantExpired(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok || e.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(e.Object)) {
			t.Fatalf("a watch the outage broke ended with %v (open %t), want an expired error", e, ok)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a watch the outage broke did not end within 10 s")
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("a watch went on after its expired error")
	}
}

func wantEvent(t *testing.T, w watch.Interface, name string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended before %s was added", name)
			}
			if cm, isCM := e.Object.(*corev1.ConfigMap); isCM && e.Type == watch.Added && cm.Name == name {
				return
			}
		case <-timeout:
			t.Fatalf("the watch did not deliver %s within 10 s", name)
		}
	}
}

// An error from a ready API server is its answer: it reaches the caller at once, unchanged.
func errorOfReadyAPIServer(t *testing.T, cp *controlPlane) {
	stranger := rest.CopyConfig(cp.admin)
	stranger.Impersonate = rest.ImpersonationConfig{UserName: "stranger"}
	outage, err := apiserverwait.New(stranger, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	lw := outage.ListerWatcher(configMapsOf(t, stranger, "default"))
	listed := call(func() (runtime.Object, error) { return lw.ListWithContext(t.Context(), metav1.ListOptions{}) })
	select {
	case r := <-listed:
		if !apierrors.IsForbidden(r.err) {
			t.Fatalf("List of a user without rights: got %v, want Forbidden", r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("List of a user without rights waits on a ready API server")
	}
}
