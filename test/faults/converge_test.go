//go:build faults

package faults

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// pollInterval paces the checks that read the API server until something holds.
const pollInterval = 200 * time.Millisecond

// instance is an appkeeper resource and its kind.
type instance struct {
	kind kind
	obj  client.Object
}

// namespaceObjects are the objects of a namespace as listed at one moment, the instances first.
type namespaceObjects struct {
	instances []instance
	// live holds every object's UID that is not being deleted.
	live map[types.UID]bool
	// controlled counts the live objects each owner controls, by kind.
	controlled map[types.UID]map[string]int
	// named holds the objects by kind and name.
	named map[string]client.Object
	// orphans name the objects whose controller is gone.
	orphans []string
	pods    []*corev1.Pod
}

// childLists are the kinds an instance's children and theirs are made of, owners before what
// they own, so that a listing sees an owner at least as new as its children.
var childLists = []struct {
	kind string
	list func() client.ObjectList
}{
	{"Deployment", func() client.ObjectList { return &appsv1.DeploymentList{} }},
	{"StatefulSet", func() client.ObjectList { return &appsv1.StatefulSetList{} }},
	{"ReplicaSet", func() client.ObjectList { return &appsv1.ReplicaSetList{} }},
	{"ControllerRevision", func() client.ObjectList { return &appsv1.ControllerRevisionList{} }},
	{"Service", func() client.ObjectList { return &corev1.ServiceList{} }},
	{"EndpointSlice", func() client.ObjectList { return &discoveryv1.EndpointSliceList{} }},
	{"ConfigMap", func() client.ObjectList { return &corev1.ConfigMapList{} }},
	{secretKind, func() client.ObjectList { return &corev1.SecretList{} }},
	{claimKind, func() client.ObjectList { return &corev1.PersistentVolumeClaimList{} }},
	{"Pod", func() client.ObjectList { return &corev1.PodList{} }},
}

func listInstances(ctx context.Context, ns string) ([]instance, error) {
	var out []instance
	for _, k := range kinds {
		list := k.list()
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for _, obj := range items(list) {
			out = append(out, instance{k, obj})
		}
	}
	return out, nil
}

func listObjects(ctx context.Context, ns string, insts []instance) (*namespaceObjects, error) {
	o := &namespaceObjects{instances: insts, live: map[types.UID]bool{}, controlled: map[types.UID]map[string]int{}, named: map[string]client.Object{}}
	add := func(kind string, obj client.Object) {
		o.named[kind+"/"+obj.GetName()] = obj
		if obj.GetDeletionTimestamp() != nil {
			return
		}
		o.live[obj.GetUID()] = true
		if ref := metav1.GetControllerOf(obj); ref != nil {
			if o.controlled[ref.UID] == nil {
				o.controlled[ref.UID] = map[string]int{}
			}
			o.controlled[ref.UID][kind]++
		}
	}
	for _, inst := range insts {
		add(inst.kind.name, inst.obj)
	}
	for _, l := range childLists {
		list := l.list()
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for _, obj := range items(list) {
			add(l.kind, obj)
			if pod, ok := obj.(*corev1.Pod); ok && pod.DeletionTimestamp == nil {
				o.pods = append(o.pods, pod)
			}
		}
	}
	for key, obj := range o.named {
		if ref := metav1.GetControllerOf(obj); ref != nil && obj.GetDeletionTimestamp() == nil && !o.live[ref.UID] {
			o.orphans = append(o.orphans, fmt.Sprintf("%s (controller %s %s gone)", key, ref.Kind, ref.Name))
		}
	}
	return o, nil
}

// converged returns nil once every instance in ns is Available and no longer Progressing for its
// generation, controls exactly the children it should, runs exactly its pods, all Ready, keeps
// its retained Secret and volumes, and nothing in ns has lost its controller.
func converged(ctx context.Context, ns string) error {
	insts, err := listInstances(ctx, ns)
	if err != nil {
		return err
	}
	for _, inst := range insts {
		if err := settled(inst.obj); err != nil {
			return fmt.Errorf("%s %s: %w", inst.kind.name, inst.obj.GetName(), err)
		}
	}
	objs, err := listObjects(ctx, ns, insts)
	if err != nil {
		return err
	}
	for _, inst := range insts {
		if err := objs.exactChildren(inst); err != nil {
			return fmt.Errorf("%s %s: %w", inst.kind.name, inst.obj.GetName(), err)
		}
	}
	if len(objs.orphans) > 0 {
		return fmt.Errorf("orphans: %v", objs.orphans)
	}
	return nil
}

func settled(obj client.Object) error {
	conditions := conditionsOf(obj)
	if err := await.ConditionIs(conditions, obj.GetGeneration(), appsv1alpha1.ConditionAvailable, metav1.ConditionTrue); err != nil {
		return err
	}
	return await.ConditionIs(conditions, obj.GetGeneration(), appsv1alpha1.ConditionProgressing, metav1.ConditionFalse)
}

func conditionsOf(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *appsv1alpha1.WebServer:
		return o.Status.Conditions
	case *appsv1alpha1.Memcached:
		return o.Status.Conditions
	case *appsv1alpha1.PodSet:
		return o.Status.Conditions
	case *appsv1alpha1.MySQL:
		return o.Status.Conditions
	case *appsv1alpha1.WordPress:
		return o.Status.Conditions
	}
	return nil
}

func (o *namespaceObjects) exactChildren(inst instance) error {
	want, got := inst.kind.children(inst.obj), o.controlled[inst.obj.GetUID()]
	if !maps.Equal(want, got) {
		return fmt.Errorf("controls %v, want %v", got, want)
	}
	selector, replicas := inst.kind.pods(inst.obj)
	running := 0
	for _, pod := range o.pods {
		if !labels.SelectorFromSet(selector).Matches(labels.Set(pod.Labels)) {
			continue
		}
		running++
		if pod.Status.Phase != corev1.PodRunning || !conditions.PodReady(pod) {
			return fmt.Errorf("pod %s is %s, not Ready", pod.Name, pod.Status.Phase)
		}
	}
	if running != replicas {
		return fmt.Errorf("%d pods, want %d", running, replicas)
	}
	if inst.kind.retained == nil {
		return nil
	}
	for _, r := range inst.kind.retained(inst.obj) {
		obj, ok := o.named[r.kind+"/"+r.name]
		if !ok {
			return fmt.Errorf("no %s %s", r.kind, r.name)
		}
		if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok && pvc.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("PVC %s is %s", r.name, pvc.Status.Phase)
		}
	}
	return nil
}

// waitConverged waits until converged holds and returns how long that took.
func waitConverged(t *testing.T, ns string) time.Duration {
	t.Helper()
	began := time.Now()
	waitFor(t, "the instances to converge", func(ctx context.Context) error { return converged(ctx, ns) })
	return time.Since(began)
}

// waitFor calls check every pollInterval until it returns nil, failing the test with its last error
// after convergeTimeout.
func waitFor(t *testing.T, what string, check func(context.Context) error) {
	t.Helper()
	var err error
	if wait.PollUntilContextTimeout(context.Background(), pollInterval, convergeTimeout, true, func(context.Context) (bool, error) {
		// Each check has 10 s of its own, so that the last one gives its reason, not the deadline.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = check(ctx)
		return err == nil, nil
	}) != nil {
		t.Fatalf("waiting for %s: gave up after %s: %v", what, convergeTimeout, err)
	}
}
