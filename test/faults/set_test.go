//go:build faults

package faults

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// kind is one appkeeper kind as the suite creates and checks it.
type kind struct {
	name string
	// prefix names the instances: <prefix>-<i>.
	prefix string
	spec   map[string]any
	list   func() client.ObjectList
	// children counts, by kind, what a converged instance controls itself.
	children func(obj client.Object) map[string]int
	// pods selects the instance's pods and says how many must run.
	pods func(obj client.Object) (selector map[string]string, want int)
	// retained are the objects an instance makes without owning them, so that they outlive it
	// under the default deletionPolicy, Retain.
	retained func(obj client.Object) []retainedObject
}

// retainedObject is a Secret or PVC that an instance keeps for a successor of the same name.
type retainedObject struct {
	kind, name string
}

const (
	secretKind = "Secret"
	claimKind  = "PersistentVolumeClaim"
)

var kinds = []kind{{
	name: "WebServer", prefix: "ws", spec: map[string]any{"replicas": int64(2)},
	list: func() client.ObjectList { return &appsv1alpha1.WebServerList{} },
	children: func(client.Object) map[string]int {
		return map[string]int{"Deployment": 1, "Service": 1, "ConfigMap": 1}
	},
	pods: func(obj client.Object) (map[string]string, int) {
		ws := obj.(*appsv1alpha1.WebServer)
		return ws.SelectorLabels(), int(ptr.Deref(ws.Spec.Replicas, 1))
	},
}, {
	name: "Memcached", prefix: "mc", spec: map[string]any{"size": int64(2)},
	list: func() client.ObjectList { return &appsv1alpha1.MemcachedList{} },
	children: func(client.Object) map[string]int {
		return map[string]int{"StatefulSet": 1, "Service": 1}
	},
	pods: func(obj client.Object) (map[string]string, int) {
		mc := obj.(*appsv1alpha1.Memcached)
		return mc.SelectorLabels(), int(ptr.Deref(mc.Spec.Size, 1))
	},
}, {
	name: "PodSet", prefix: "ps", spec: map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "main", "image": "busybox:1.36", "command": []any{"sleep", "3600"}}},
	}}},
	list: func() client.ObjectList { return &appsv1alpha1.PodSetList{} },
	children: func(obj client.Object) map[string]int {
		return map[string]int{"Pod": int(obj.(*appsv1alpha1.PodSet).DesiredReplicas())}
	},
	pods: func(obj client.Object) (map[string]string, int) {
		ps := obj.(*appsv1alpha1.PodSet)
		return ps.SelectorLabels(), int(ps.DesiredReplicas())
	},
}, {
	name: "MySQL", prefix: "my", spec: map[string]any{"database": "shop", "user": "shop"},
	list: func() client.ObjectList { return &appsv1alpha1.MySQLList{} },
	children: func(client.Object) map[string]int {
		// The client and headless Services; the Secret of the backup account.
		return map[string]int{"StatefulSet": 1, "Service": 2, "ConfigMap": 1, secretKind: 1}
	},
	pods: func(obj client.Object) (map[string]string, int) {
		return obj.(*appsv1alpha1.MySQL).SelectorLabels(), 1
	},
	retained: func(obj client.Object) []retainedObject {
		m := obj.(*appsv1alpha1.MySQL)
		return []retainedObject{{secretKind, m.GeneratedSecretName()}, {claimKind, m.DataClaimName()}}
	},
}, {
	// Each WordPress runs a MySQL of its own, which the MySQL row checks.
	name: "WordPress", prefix: "wp", spec: map[string]any{},
	list: func() client.ObjectList { return &appsv1alpha1.WordPressList{} },
	children: func(client.Object) map[string]int {
		return map[string]int{"Deployment": 1, "Service": 1, secretKind: 1, "MySQL": 1}
	},
	pods: func(obj client.Object) (map[string]string, int) {
		wp := obj.(*appsv1alpha1.WordPress)
		return wp.SelectorLabels(), int(wp.DesiredReplicas())
	},
	retained: func(obj client.Object) []retainedObject {
		return []retainedObject{{claimKind, obj.(*appsv1alpha1.WordPress).ContentClaimName()}}
	},
}}

func kindNamed(name string) kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	panic("no kind " + name)
}

// createSet creates perKind instances of every kind in ns, as a user applying manifests would.
func createSet(t *testing.T, ns string) {
	t.Helper()
	for _, k := range kinds {
		for i := range perKind {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": appsv1alpha1.GroupVersion.String(),
				"kind":       k.name,
				"metadata":   map[string]any{"name": fmt.Sprintf("%s-%d", k.prefix, i), "namespace": ns},
				"spec":       runtime.DeepCopyJSONValue(k.spec),
			}}
			if err := k8s.Create(context.Background(), obj); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// scaleUp adds a replica to every WebServer and PodSet, or to those of one kind when only is set:
// a spec change every instance must converge to. Never down, so that a PodSet's pods stay within its
// spec while they follow it.
func (s *scenario) scaleUp(only ...string) {
	s.t.Helper()
	ctx := context.Background()
	for _, name := range []string{"WebServer", "PodSet"} {
		if len(only) > 0 && only[0] != name {
			continue
		}
		list := kindNamed(name).list()
		if err := k8s.List(ctx, list, client.InNamespace(s.ns)); err != nil {
			s.t.Fatal(err)
		}
		for _, obj := range items(list) {
			_, replicas := kindNamed(name).pods(obj)
			if name == "PodSet" {
				s.inv.asked(obj.GetName(), replicas+1)
			}
			patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas+1))
			if err := k8s.Patch(ctx, obj, patch); err != nil {
				s.t.Fatal(err)
			}
		}
	}
}

// items are the objects of a list.
func items(list client.ObjectList) []client.Object {
	objs, err := meta.ExtractList(list)
	if err != nil {
		panic(err)
	}
	out := make([]client.Object, len(objs))
	for i, obj := range objs {
		out[i] = obj.(client.Object)
	}
	return out
}
