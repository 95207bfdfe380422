package localcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createNodesAndStorage registers the fake nodes, which kwok then brings to Ready, and the
// default StorageClass, whose claims kwok provisions and binds.
func (c *Cluster) createNodesAndStorage(ctx context.Context) error {
	cl, err := c.client()
	if err != nil {
		return err
	}
	objs := []client.Object{defaultStorageClass()}
	for i := range c.nodes {
		node := fakeNode(fmt.Sprintf("kwok-node-%d", i))
		if c.real != nil {
			node.Spec.Taints = []corev1.Taint{{Key: FakeNodeTaint, Value: "fake", Effect: corev1.TaintEffectNoSchedule}}
		}
		objs = append(objs, node)
	}
	for _, obj := range objs {
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		if err := cl.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err)
		}
	}
	return nil
}

// fakeNode is a node that kwok manages. Its status is accepted on create, as from a kubelet
// registering; the node-initialize stage keeps the allocatable resources given here.
func fakeNode(name string) *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("1000"),
	}
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{
				"type":                   "kwok",
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
			},
		},
		Status: corev1.NodeStatus{Allocatable: resources, Capacity: resources},
	}
}

func defaultStorageClass() *storagev1.StorageClass {
	reclaim := corev1.PersistentVolumeReclaimDelete
	binding := storagev1.VolumeBindingImmediate
	return &storagev1.StorageClass{
		TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        storageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kwok.x-k8s.io/volume",
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &binding,
	}
}
