package mysql

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/event"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// makeStatefulSetForMembers readies a StatefulSet for a cluster's members: a one-server MySQL's,
// whose pod management policy cannot change, or one that rolls its pods itself, whose update
// strategy could change only by dropping fields the API server filled in. It is deleted with its
// pods left running, and the next pass makes it again, to adopt them. It tells whether that is
// under way.
func (r *Reconciler) makeStatefulSetForMembers(ctx context.Context, m *appsv1alpha1.MySQL, sts *appsv1.StatefulSet) (bool, error) {
	if !m.Clustered() || sts == nil ||
		sts.Spec.PodManagementPolicy == appsv1.ParallelPodManagement && sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return false, nil
	}
	if !sts.DeletionTimestamp.IsZero() {
		return true, nil
	}
	deleted, err := apply.DeleteExactly(ctx, r.Client, sts, client.PropagationPolicy(metav1.DeletePropagationOrphan))
	if err != nil {
		return true, fmt.Errorf("replace the StatefulSet of MySQL %s/%s for %d members: %w", m.Namespace, m.Name, m.MemberCount(), err)
	}
	if !deleted {
		return true, nil
	}
	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		event.Scaled.Emit(r.Recorder, m, nil, "growing from one server to %d members: the server restarts once, with its binary log on, "+
			"and the new members start from a copy of its data", m.MemberCount())
	}
	log.FromContext(ctx).Info("deleted the StatefulSet, leaving its pods running, to make it again for members", "members", m.MemberCount())
	return true, nil
}

// restartSingleServerPods deletes a cluster's member pods that were made for a single server: they
// lack the donor the new members copy their data from, and the StatefulSet would replace them only
// after those members are Ready, which they cannot be without a copy.
func (r *Reconciler) restartSingleServerPods(ctx context.Context, m *appsv1alpha1.MySQL, pods []corev1.Pod) error {
	if !m.Clustered() {
		return nil
	}
	for i := range pods {
		pod := &pods[i]
		// The cache keeps of a pod's spec only what tells why a container ends, not its images or
		// commands: the kubelet's statuses name the containers, once it has seen the pod.
		statuses := pod.Status.ContainerStatuses
		hasDonor := slices.ContainsFunc(statuses, func(c corev1.ContainerStatus) bool { return c.Name == resources.DonorContainer })
		if len(statuses) == 0 || hasDonor || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		if _, err := apply.DeleteExactly(ctx, r.Client, pod); err != nil {
			return fmt.Errorf("restart pod %s/%s as a cluster member: %w", pod.Namespace, pod.Name, err)
		}
		log.FromContext(ctx).Info("restarted a single server's pod as a cluster member", "pod", pod.Name)
	}
	return nil
}
