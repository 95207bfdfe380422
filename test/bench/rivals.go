package main

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// rivalKinds maps a kind to the kind whose resource of the same name wants a child of the same
// name: every kind but PodSet names its client Service after itself. The rival is one that
// becomes Available all the same, its workload named apart from the instance's: a Memcached's
// StatefulSet would take a MySQL's, a WebServer's Deployment a WordPress's. A PodSet has none:
// its children are pods, which the operator makes for no other kind.
var rivalKinds = map[string]string{
	"WebServer": "Memcached", "Memcached": "WebServer", "MySQL": "WebServer", "WordPress": "Memcached",
}

// createRivals creates, for the first o.rivals instances of k in ns, a resource of the rival kind
// with the same name, and waits until each reports the name conflict with its other children
// ready. The idle period that follows then measures an operator with such pairs present, which
// must neither write nor retry: the first owner keeps the name.
func (b *bench) createRivals(ctx context.Context, k benchKind, n int, ns string) (int, error) {
	rival, ok := kindNamed(rivalKinds[k.name])
	count := min(b.o.rivals, n)
	if !ok || count == 0 {
		return 0, nil
	}
	sample := rival.newCR(ns, "")
	conflicted, err := watchReady(ctx, b.cluster.Config, ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sample.GetAPIVersion(), "kind": sample.GetKind()}}, crNameConflict)
	if err != nil {
		return 0, err
	}
	defer conflicted.stop()
	if err := parallel(count, func(i int) error {
		return b.c.Create(ctx, rival.newCR(ns, instanceName(k, i)))
	}); err != nil {
		return 0, fmt.Errorf("create rivals: %w", err)
	}
	return count, conflicted.waitCount(ctx, count, convergeTimeout)
}

func kindNamed(name string) (benchKind, bool) {
	for _, k := range kinds {
		if k.name == name {
			return k, true
		}
	}
	return benchKind{}, false
}

// crNameConflict is true when an appkeeper resource is Available, no longer Progressing, and
// Degraded for a name another resource holds.
func crNameConflict(obj client.Object) bool {
	degraded, ok := crConditionOf(obj, appsv1alpha1.ConditionDegraded)
	return ok && crSettled(obj) && degraded["status"] == string(metav1.ConditionTrue) &&
		degraded["reason"] == appsv1alpha1.ReasonNameConflict
}
