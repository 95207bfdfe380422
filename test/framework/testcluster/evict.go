package testcluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Evict asks for pod's eviction, as kubectl drain does: the API server refuses it with 429 Too Many
// Requests while a disruption budget of the pod allows no disruption.
func Evict(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	return c.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
	})
}
