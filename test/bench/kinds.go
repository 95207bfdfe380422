package main

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/memcached"
	"github.com/appkeeper/appkeeper/internal/resources/podset"
	"github.com/appkeeper/appkeeper/internal/resources/webserver"
)

// benchKind is one kind under benchmark: how to write an instance of size 1, the children the
// operator would make for it (which the floor creates itself), and which child shows readiness.
type benchKind struct {
	name string
	spec map[string]any
	// typed receives the defaulted custom resource, to build the children from.
	typed func() client.Object
	// children are the objects the operator creates for cr, in its order, without owner
	// references. defaulted fills in an object as the API server would default it, without
	// storing it, for children built from another custom resource the operator creates.
	children func(cr client.Object, defaulted func(client.Object) error) ([]client.Object, error)
	// gate, when set, holds back some children until another child of the same instance is
	// ready, as the operator holds them back.
	gate *gate
	// primary is the child that becomes ready, named like the instance's main child.
	primary      func() client.Object
	primaryName  func(crName string) string
	primaryReady func(client.Object) bool
}

// gate is a dependency between the children of one instance: those that holds picks are created
// only once the child like sample named name(instance) is ready.
type gate struct {
	sample func() client.Object
	name   func(crName string) string
	ready  func(client.Object) bool
	holds  func(client.Object) bool
}

var kinds = []benchKind{
	{
		name:  "WebServer",
		spec:  map[string]any{"replicas": int64(1)},
		typed: func() client.Object { return &appsv1alpha1.WebServer{} },
		children: func(cr client.Object, _ func(client.Object) error) ([]client.Object, error) {
			ws := cr.(*appsv1alpha1.WebServer)
			return []client.Object{
				typedFrom[corev1.ConfigMap](webserver.ConfigMap(ws)),
				typedFrom[appsv1.Deployment](webserver.Deployment(ws)),
				typedFrom[corev1.Service](webserver.Service(ws)),
			}, nil
		},
		primary:      func() client.Object { return &appsv1.Deployment{} },
		primaryName:  func(name string) string { return name },
		primaryReady: deploymentAvailable,
	},
	{
		name:  "Memcached",
		spec:  map[string]any{"size": int64(1)},
		typed: func() client.Object { return &appsv1alpha1.Memcached{} },
		children: func(cr client.Object, _ func(client.Object) error) ([]client.Object, error) {
			mc := cr.(*appsv1alpha1.Memcached)
			return []client.Object{
				typedFrom[appsv1.StatefulSet](memcached.StatefulSet(mc)),
				typedFrom[corev1.Service](memcached.Service(mc)),
			}, nil
		},
		primary:      func() client.Object { return &appsv1.StatefulSet{} },
		primaryName:  func(name string) string { return name },
		primaryReady: statefulSetReady,
	},
	{
		name: "PodSet",
		spec: map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "sleep", "image": "busybox:1.36", "command": []any{"sleep", "3600"}}},
		}}},
		typed: func() client.Object { return &appsv1alpha1.PodSet{} },
		children: func(cr client.Object, _ func(client.Object) error) ([]client.Object, error) {
			ps := cr.(*appsv1alpha1.PodSet)
			pod := podset.Pod(ps, 0, podset.TemplateHash(&ps.Spec.Template))
			pod.OwnerReferences = nil
			return []client.Object{pod}, nil
		},
		primary:     func() client.Object { return &corev1.Pod{} },
		primaryName: func(name string) string { return name + "-0" },
		primaryReady: func(obj client.Object) bool {
			for _, c := range obj.(*corev1.Pod).Status.Conditions {
				if c.Type == corev1.PodReady {
					return c.Status == corev1.ConditionTrue
				}
			}
			return false
		},
	},
	{
		// Its data claim binds on kwok: the claim its StatefulSet makes gets the local cluster's
		// default StorageClass at admission, whose claims kwok's volume stages provision and bind.
		name:  "MySQL",
		spec:  map[string]any{},
		typed: func() client.Object { return &appsv1alpha1.MySQL{} },
		children: func(cr client.Object, _ func(client.Object) error) ([]client.Object, error) {
			return mysqlChildren(cr.(*appsv1alpha1.MySQL)), nil
		},
		primary:      func() client.Object { return &appsv1.StatefulSet{} },
		primaryName:  func(name string) string { return name },
		primaryReady: statefulSetReady,
	},
	{
		name:  "WordPress",
		spec:  map[string]any{"database": map[string]any{"mysql": map[string]any{}}},
		typed: func() client.Object { return &appsv1alpha1.WordPress{} },
		children: func(cr client.Object, defaulted func(client.Object) error) ([]client.Object, error) {
			return wordpressChildren(cr.(*appsv1alpha1.WordPress), defaulted)
		},
		gate:         wordpressGate,
		primary:      func() client.Object { return &appsv1.Deployment{} },
		primaryName:  func(name string) string { return name },
		primaryReady: deploymentAvailable,
	},
}

// newCR is an instance of k named name in ns.
func (k benchKind) newCR(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": appsv1alpha1.GroupVersion.String(),
		"kind":       k.name,
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       runtime.DeepCopyJSONValue(k.spec),
	}}
}

// typedFrom converts an apply configuration to its typed object, dropping the owner references
// that only the operator's objects carry.
func typedFrom[T any, PT interface {
	*T
	client.Object
}](ac any) client.Object {
	raw, err := json.Marshal(ac)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", ac, err))
	}
	obj := PT(new(T))
	if err := json.Unmarshal(raw, obj); err != nil {
		panic(fmt.Sprintf("unmarshal into %T: %v", obj, err))
	}
	obj.SetOwnerReferences(nil)
	return obj
}

// deploymentAvailable is true when a Deployment runs its current spec with all its replicas
// available.
func deploymentAvailable(obj client.Object) bool {
	d := obj.(*appsv1.Deployment)
	return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas >= *d.Spec.Replicas
}

// statefulSetReady is true when a StatefulSet runs its current spec with all its replicas ready.
func statefulSetReady(obj client.Object) bool {
	s := obj.(*appsv1.StatefulSet)
	return s.Status.ObservedGeneration >= s.Generation && s.Status.ReadyReplicas >= *s.Spec.Replicas
}

// crAvailable is true when an appkeeper resource reports Available=True for its generation.
func crAvailable(obj client.Object) bool {
	return crCondition(obj, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue)
}

// crSettled is true when an appkeeper resource is Available and no longer Progressing: its status
// has caught up with its children, so the operator has nothing left to write.
func crSettled(obj client.Object) bool {
	return crAvailable(obj) && crCondition(obj, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse)
}

// crCondition is true when an appkeeper resource reports condition type with status for its
// generation.
func crCondition(obj client.Object, conditionType string, status metav1.ConditionStatus) bool {
	c, ok := crConditionOf(obj, conditionType)
	return ok && c["status"] == string(status)
}

// crConditionOf is the condition of type conditionType that an appkeeper resource reports for its
// generation.
func crConditionOf(obj client.Object, conditionType string) (map[string]any, bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, false
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conditions {
		c, ok := raw.(map[string]any)
		if !ok || c["type"] != conditionType {
			continue
		}
		generation, _, _ := unstructured.NestedInt64(c, "observedGeneration")
		return c, generation == u.GetGeneration()
	}
	return nil, false
}
