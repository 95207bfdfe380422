package podset

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// eventNames is how many pod names an event lists; a PodSet of hundreds of pods keeps short events.
const eventNames = 5

// recordScale emits Scaled when a new spec of a PodSet seen before asks for another number of pods
// than it had.
func (r *Reconciler) recordScale(original *appsv1alpha1.PodSet) {
	s := original.Status
	if s.ObservedGeneration == 0 || s.ObservedGeneration == original.Generation || s.Replicas == original.DesiredReplicas() {
		return
	}
	event.Scaled.Emit(r.Recorder, original, nil,
		"scaling from %d to %d pods", s.Replicas, original.DesiredReplicas())
}

// recordUpgrade emits Upgraded when a rollout to a new template has just completed.
func (r *Reconciler) recordUpgrade(original, ps *appsv1alpha1.PodSet) {
	if original.Status.TemplateHash != "" && ps.Status.TemplateHash != original.Status.TemplateHash {
		event.Upgraded.Emit(r.Recorder, ps, nil,
			"all %d pods run template %s", ps.Status.Replicas, ps.Status.TemplateHash)
	}
}

// recordDeletions emits one event per kind of replacement this pass started; scaling down has had
// its Scaled event. While d rolls back, the pods of another template are those of the revision that
// failed, and their replacement puts the last good one back.
func (r *Reconciler) recordDeletions(ps *appsv1alpha1.PodSet, d rollout.Decision, planned []deletion, deleted map[types.UID]bool) {
	var old, failed, succeeded []string
	for _, del := range planned {
		switch {
		case !deleted[del.pod.UID]:
		case del.why == stale:
			old = append(old, del.pod.Name)
		case del.why == finished && del.pod.Status.Phase == corev1.PodFailed:
			failed = append(failed, del.pod.Name)
		case del.why == finished:
			succeeded = append(succeeded, del.pod.Name)
		}
	}
	switch {
	case len(old) > 0 && d.RollBack:
		event.Replaced.Emit(r.Recorder, ps, nil,
			"putting revision %s back: deleted %s", d.Status.CurrentRevision, nameList(old))
	case len(old) > 0:
		event.Upgrading.Emit(r.Recorder, ps, nil,
			"replacing pods of an older template: deleted %s", nameList(old))
	}
	if len(failed) > 0 {
		event.ReplacedFailed.Emit(r.Recorder, ps, nil,
			"deleted failed pods %s to replace them", nameList(failed))
	}
	if len(succeeded) > 0 {
		event.Replaced.Emit(r.Recorder, ps, nil,
			"deleted pods %s, whose containers exited, to replace them", nameList(succeeded))
	}
}

func (r *Reconciler) recordCreations(ps *appsv1alpha1.PodSet, names []string) {
	if len(names) > 0 {
		event.Created.Emit(r.Recorder, ps, nil,
			"created pods %s", nameList(names))
	}
}

// nameList joins the first few names and counts the others.
func nameList(names []string) string {
	if len(names) <= eventNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:eventNames], ", "), len(names)-eventNames)
}
