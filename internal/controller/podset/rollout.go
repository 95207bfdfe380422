package podset

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	resources "github.com/appkeeper/appkeeper/internal/resources/podset"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// revision is the revision of the pods the spec as written asks for, named after the template hash
// its pods carry, so that a pod's annotation tells which revision it runs.
func revision(ps *appsv1alpha1.PodSet) rollout.Revision {
	images := make([]string, 0, len(ps.Spec.Template.Spec.Containers))
	for _, c := range ps.Spec.Template.Spec.Containers {
		images = append(images, c.Image)
	}
	return rollout.Revision{
		Name:  resources.TemplateHash(&ps.Spec.Template),
		Image: strings.Join(images, ","),
		Spec:  rollout.Snapshot(ps.Spec),
	}
}

// podFields copies into spec what makes a PodSet's pods from the spec of a good revision: the
// template alone. The number of pods, the pace of their replacement and the upgrade policy stay as
// the spec says.
func podFields(spec, good *appsv1alpha1.PodSetSpec) {
	spec.Template = good.Template
}

// decide is the rollout decision of a pass over pods, the PodSet's as the cache has them. Only the
// pods of the spec's revision can show it failed: the other pods are going anyway. Pods that could
// not be read (podsErr) show nothing, so the status stays as it was.
func decide(ps *appsv1alpha1.PodSet, desired rollout.Revision, pods []corev1.Pod, podsErr error) rollout.Decision {
	if podsErr != nil {
		return rollout.Decision{Status: ps.Status.Rollout}
	}
	var own []corev1.Pod
	for i := range pods {
		if metav1.IsControlledBy(&pods[i], ps) && isCurrent(&pods[i], desired.Name) {
			own = append(own, pods[i])
		}
	}
	return rollout.Decide(rollout.Input{
		Policy: ps.Spec.Upgrade, Status: ps.Status.Rollout, Desired: desired, Pods: own, Now: time.Now(),
	})
}

// rolloutComplete tells whether the target's template, whose hash is hash, runs on every pod ps
// wants, at least one, all of them ready: evidence that its revision is good. pods are the pods as
// they stand after the pass.
func rolloutComplete(ps *appsv1alpha1.PodSet, hash string, pods []corev1.Pod) bool {
	want := ps.DesiredReplicas()
	c, _, _ := tally(ps, hash, pods)
	return want > 0 && c.replicas == want && c.updated == want && c.ready == want
}
