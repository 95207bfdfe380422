package memcached

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/memcached"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// revision is the revision of the members the spec as written asks for.
func revision(mc *appsv1alpha1.Memcached) rollout.Revision {
	return rollout.Revision{
		Name:  rollout.Hash(resources.StatefulSet(mc).Spec.Template),
		Image: mc.Spec.Image,
		Spec:  rollout.Snapshot(mc.Spec),
	}
}

// decide is which revision the pass applies. A spec whose memory cannot work is never applied (the
// members keep the last one that could), so it has no rollout to judge: the rollout status stays
// as it is, and Degraded says what is wrong with the spec.
func decide(mc *appsv1alpha1.Memcached, desired rollout.Revision, pods []corev1.Pod) rollout.Decision {
	if resources.MemoryProblem(mc.Spec) != "" {
		return rollout.Decision{Status: *mc.Status.Rollout.DeepCopy()}
	}
	return rollout.Decide(rollout.Input{Policy: mc.Spec.Upgrade, Status: mc.Status.Rollout, Desired: desired, Pods: pods, Now: time.Now()})
}

// podFields copies into spec what makes a Memcached's members from the spec of a good revision.
// The port goes with them, as the container listens on it; the size stays as the spec says.
func podFields(spec, good *appsv1alpha1.MemcachedSpec) {
	spec.Image, spec.Port, spec.Resources = good.Image, good.Port, good.Resources
	spec.MemoryMB, spec.MaxConnections = good.MemoryMB, good.MaxConnections
	spec.PodSecurityContext, spec.SecurityContext = good.PodSecurityContext, good.SecurityContext
	spec.NodeSelector, spec.Tolerations, spec.Affinity = good.NodeSelector, good.Tolerations, good.Affinity
	spec.PodLabels, spec.PodAnnotations = good.PodLabels, good.PodAnnotations
	spec.Monitoring = good.Monitoring
}

// replaceFailedMembers deletes, all at once, the members a rolled back revision left not Ready:
// they serve nothing, and the StatefulSet, which replaces one member at a time, would wait for
// them forever. The members that serve are left alone. replaced tells whether any went.
func (r *Reconciler) replaceFailedMembers(ctx context.Context, mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, pods []corev1.Pod, d rollout.Decision) (replaced bool, err error) {
	for _, pod := range d.FailedMembers(sts, pods) {
		if err := r.wedged.DeleteRolledBack(ctx, r.Client, r.Recorder, mc, pod, d.Status.Failed.Name, d.Status.LastGood.Name); err != nil {
			return replaced, fmt.Errorf("member of Memcached %s/%s: %w", mc.Namespace, mc.Name, err)
		}
		replaced = true
	}
	return replaced, nil
}

// rolloutComplete is true when the StatefulSet runs the current spec on exactly the desired number
// of members, all of them available.
func rolloutComplete(mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet) bool {
	if sts == nil || sts.Status.ObservedGeneration < sts.Generation || !templateCurrent(mc, sts) {
		return false
	}
	want := mc.DesiredSize()
	s := sts.Status
	return sts.Spec.Replicas != nil && *sts.Spec.Replicas == want &&
		s.Replicas == want && s.UpdatedReplicas == want && s.AvailableReplicas == want &&
		s.CurrentRevision == s.UpdateRevision
}

// replaceWedgedMember deletes one member that runs an older revision and cannot become Ready: the
// StatefulSet would wait for it forever, so a broken image or flags, once fixed in the spec, would
// never roll out. One member at a time, and only while every other member exists and none is
// terminating. recheck is when a member still in its grace should be looked at again.
func (r *Reconciler) replaceWedgedMember(ctx context.Context, mc *appsv1alpha1.Memcached, sts *appsv1.StatefulSet, pods []corev1.Pod) (recheck time.Duration, err error) {
	memberPods := members(mc, sts, pods)
	wedged, recheck := rollout.WedgedMembers(sts, memberPods, time.Now())
	if len(wedged) == 0 || sts.Spec.Replicas == nil || len(memberPods) < int(*sts.Spec.Replicas) || anyTerminating(sts, pods) {
		return recheck, nil
	}
	if err := r.wedged.Delete(ctx, r.Client, r.Recorder, mc, wedged[0]); err != nil {
		return 0, fmt.Errorf("member of Memcached %s/%s: %w", mc.Namespace, mc.Name, err)
	}
	return recheck, nil
}

// anyTerminating tells whether a pod of the StatefulSet is being deleted.
func anyTerminating(sts *appsv1.StatefulSet, pods []corev1.Pod) bool {
	for i := range pods {
		if metav1.IsControlledBy(&pods[i], sts) && pods[i].DeletionTimestamp != nil {
			return true
		}
	}
	return false
}
