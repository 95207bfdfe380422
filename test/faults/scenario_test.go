//go:build faults

package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/operatorproc"
)

// scenario is one fault on a namespace of its own, with an operator of its own, so that its log
// and counters tell of this fault alone.
type scenario struct {
	t     *testing.T
	name  string
	ns    string
	began time.Time
	ops   []*operatorproc.Supervisor
	inv   *invariants
	// reported is set once the scenario's summary is reported.
	reported bool
}

// begin creates the scenario's namespace, starts replicas of the operator and watches the
// invariants. When the test ends, the operators are stopped first, then the namespace is torn down,
// so that the next scenario's operator finds nothing of this one.
func begin(t *testing.T, name string, replicas int) *scenario {
	t.Helper()
	s := &scenario{t: t, name: name, began: time.Now()}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "faults-" + name + "-"}}
	if err := k8s.Create(context.Background(), namespace); err != nil {
		t.Fatal(err)
	}
	s.ns = namespace.Name
	t.Cleanup(func() { tearDown(t, s.ns) })
	s.ops = startOperators(t, name, replicas)
	s.inv = watchInvariants(t, s.ns)
	// A scenario that stops early still has its row, before its operators stop.
	t.Cleanup(func() {
		if !s.reported {
			s.report(summary{notes: "stopped early: see the test's failure"})
		}
	})
	return s
}

// createSet creates the instances and waits for them to converge.
func (s *scenario) createSet() {
	s.t.Helper()
	createSet(s.t, s.ns)
	waitConverged(s.t, s.ns)
}

// tearDown deletes the instances in ns and what they keep, waits for all of it to go, and deletes
// ns. It does not wait for ns to go: kube-controller-manager takes about 5 s to end even an empty
// namespace, and nothing is left in it for the next scenario's operator to see.
func tearDown(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	var all []client.Object
	for _, k := range kinds {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind(k.name))
		all = append(all, obj)
	}
	for _, obj := range append(all, &corev1.PersistentVolumeClaim{}, &corev1.Secret{}) {
		if err := k8s.DeleteAllOf(ctx, obj, client.InNamespace(ns)); client.IgnoreNotFound(err) != nil {
			t.Error(err)
			return
		}
	}
	waitFor(t, "the objects in "+ns+" to go", func(ctx context.Context) error {
		objs, err := listObjects(ctx, ns, nil)
		if err != nil {
			return err
		}
		for key := range objs.named {
			if key != "ConfigMap/kube-root-ca.crt" {
				return fmt.Errorf("%s is left", key)
			}
		}
		return nil
	})
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := k8s.Delete(ctx, namespace); client.IgnoreNotFound(err) != nil {
		t.Error(err)
	}
}

// gone returns nil once obj is not found.
func gone(ctx context.Context, obj client.Object) error {
	err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%s is still there", obj.GetName())
}

// finish checks the invariants and reports the summary.
func (s *scenario) finish(sum summary, mayGo func(kind, name string) bool) {
	s.t.Helper()
	s.inv.check(s.t, mayGo)
	s.report(sum)
}

// report completes the summary with the operator's counters and log, and reports it.
func (s *scenario) report(sum summary) {
	s.t.Helper()
	s.reported = true
	total := counts(s.ops)
	sum.scenario, sum.writes, sum.conflicts = s.name, total.writes, total.conflicts
	for _, op := range s.ops {
		sum.restarts += op.Restarts()
		sum.logErrors += len(errorLines(readLog(s.t, op.LogPath())))
	}
	sum.took = time.Since(s.began)
	report(s.t, sum)
}

// logLines are the lines of the operators' logs that hold every one of words.
func (s *scenario) logLines(words ...string) []string {
	var out []string
	for _, op := range s.ops {
	lines:
		for _, line := range strings.Split(readLog(s.t, op.LogPath()), "\n") {
			for _, w := range words {
				if !strings.Contains(line, w) {
					continue lines
				}
			}
			out = append(out, line)
		}
	}
	return out
}
