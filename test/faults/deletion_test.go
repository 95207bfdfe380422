//go:build faults

package faults

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// deleteRate and deleteLength: the children a person deletes per second, and for how long.
	deleteRate   = 5
	deleteLength = 10 * time.Second
	// namespaceGrace lets the operator finish the passes under way once its namespace is gone,
	// before its log is read.
	namespaceGrace = time.Second
)

// deletable are the children a person deletes in turn: every kind's workload and Service, and
// the PodSets' pods.
func deletable(ns string) []client.Object {
	var out []client.Object
	for i := range perKind {
		out = append(out,
			&appsv1.Deployment{ObjectMeta: objectMeta(ns, "ws-%d", i)},
			&corev1.Service{ObjectMeta: objectMeta(ns, "ws-%d", i)},
			&appsv1.StatefulSet{ObjectMeta: objectMeta(ns, "mc-%d", i)},
			&corev1.Pod{ObjectMeta: objectMeta(ns, "ps-%d-0", i)},
			&appsv1.StatefulSet{ObjectMeta: objectMeta(ns, "my-%d", i)},
			&corev1.Service{ObjectMeta: objectMeta(ns, "my-%d", i)},
			&appsv1.Deployment{ObjectMeta: objectMeta(ns, "wp-%d", i)},
			&corev1.Pod{ObjectMeta: objectMeta(ns, "ps-%d-1", i)})
	}
	return out
}

func objectMeta(ns, format string, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf(format, i)}
}

// A person deletes children five times a second for 10 s, each one as it comes back too: the
// operator makes each again, exactly once, and the garbage collector leaves nothing behind.
func TestChildrenDeleted(t *testing.T) {
	s := begin(t, "children-deleted", 1)
	s.createSet()
	children := deletable(s.ns)
	tick := time.NewTicker(time.Second / deleteRate)
	deleted := 0
	for end := time.Now().Add(deleteLength); time.Now().Before(end); <-tick.C {
		err := k8s.Delete(context.Background(), children[deleted%len(children)])
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		deleted++
	}
	tick.Stop()
	converged := waitConverged(t, s.ns)
	s.finish(summary{
		converged: []time.Duration{converged},
		notes:     fmt.Sprintf("%d Deployments, StatefulSets, Services and PodSet pods deleted over %.0f s", deleted, deleteLength.Seconds()),
	}, nil)
}

// The namespace holding instances of every kind is deleted: it goes completely, and the operator
// does not report as failures the writes the API server refuses in a namespace being terminated.
func TestNamespaceDeleted(t *testing.T) {
	s := begin(t, "namespace-deleted", 1)
	s.createSet()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}
	if err := k8s.Delete(context.Background(), namespace); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	waitFor(t, "the namespace to go", func(ctx context.Context) error { return gone(ctx, namespace) })
	took := time.Since(began)
	time.Sleep(namespaceGrace)
	if lines := s.logLines("Reconciler error", "being terminated"); len(lines) > 0 {
		t.Errorf("the operator logged %d Reconciler errors about the namespace being terminated, the first:\n%s", len(lines), lines[0])
	}
	s.finish(summary{
		converged: []time.Duration{took},
		notes:     "time is from the namespace's deletion to its end",
	}, func(string, string) bool { return true })
}
