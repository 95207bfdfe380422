package kubectlplugin

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// messageLimit bounds a condition's message on a status line: a pod's message can run long, and
// -o yaml shows it whole.
const messageLimit = 120

// health says in words what an instance's conditions say. Ready already names what stands in its
// way, in the operator's order (Degraded, Progressing, Available, DatabaseReady), so the words
// follow Ready's reason, with the details its condition and the rollout status give.
func health(i instance) string {
	if i.object.GetDeletionTimestamp() != nil {
		return "deleting"
	}
	if generation := i.object.GetGeneration(); i.observed < generation {
		if i.observed == 0 {
			return "not yet observed by the operator"
		}
		return fmt.Sprintf("spec changed, generation %d not yet observed by the operator", generation)
	}
	if degraded := meta.FindStatusCondition(i.conditions, appsv1alpha1.ConditionDegraded); degraded != nil && degraded.Status == metav1.ConditionTrue {
		return degradedWords(i, degraded)
	}
	ready := meta.FindStatusCondition(i.conditions, appsv1alpha1.ConditionReady)
	switch {
	case ready == nil:
		return "no Ready condition yet"
	case ready.Status == metav1.ConditionUnknown:
		return "unknown: " + reasonAndMessage(ready)
	case ready.Status == metav1.ConditionTrue:
		return readyWords(i, ready)
	}
	return notReadyWords(i, ready)
}

func readyWords(i instance, ready *metav1.Condition) string {
	words := "ready"
	if ready.Reason == appsv1alpha1.ReasonScaledToZero {
		words = "scaled to zero"
	}
	if i.restore != nil {
		words += ", restored from " + i.restore.Source
	}
	return words
}

func degradedWords(i instance, degraded *metav1.Condition) string {
	failed := i.rollout.Failed
	if degraded.Reason == appsv1alpha1.ReasonRolledBack && failed != nil {
		// The image rolled back to is the one the status line shows running.
		return fmt.Sprintf("rolled back from %s (%s)", revisionName(failed.Image, failed.Name), failed.Reason)
	}
	// A pod's message repeats the reason after the container's name: say it once.
	message := strings.Replace(degraded.Message, ": "+degraded.Reason+": ", ": ", 1)
	return "degraded: " + reasonAndMessage(&metav1.Condition{Reason: degraded.Reason, Message: message})
}

func notReadyWords(i instance, ready *metav1.Condition) string {
	counts := fmt.Sprintf("%d/%d ready", i.ready, i.desired)
	switch ready.Reason {
	case appsv1alpha1.ReasonRollingOut:
		if i.updated != nil {
			counts = fmt.Sprintf("%d/%d updated", *i.updated, i.desired)
		}
		return fmt.Sprintf("rolling out to revision %s (%s)", i.rollout.UpdateRevision, counts)
	case appsv1alpha1.ReasonScaling:
		return fmt.Sprintf("scaling to %d (%s)", i.desired, counts)
	case appsv1alpha1.ReasonCreating:
		return fmt.Sprintf("creating (%s)", counts)
	case appsv1alpha1.ReasonReplicasNotReady:
		return fmt.Sprintf("not ready (%s)", counts)
	case appsv1alpha1.ReasonWaitingForBackup:
		return "waiting for the backup before the upgrade: " + shorten(ready.Message)
	case appsv1alpha1.ReasonRestoreSourceNotReady, appsv1alpha1.ReasonRestoring:
		return "restoring: " + shorten(ready.Message)
	case appsv1alpha1.ReasonWaitingForDatabase:
		return fmt.Sprintf("waiting for its database mysql/%s", i.database)
	}
	return "not ready: " + reasonAndMessage(ready)
}

// revisionName is an image, which a person knows, or else a revision's hash.
func revisionName(image, revision string) string {
	if image != "" {
		return image
	}
	return "revision " + revision
}

func reasonAndMessage(c *metav1.Condition) string {
	if c.Message == "" {
		return c.Reason
	}
	return c.Reason + ": " + shorten(c.Message)
}

// shorten keeps a message on one line of a table.
func shorten(message string) string {
	message = strings.Join(strings.Fields(message), " ")
	if runes := []rune(message); len(runes) > messageLimit {
		return string(runes[:messageLimit-1]) + "…"
	}
	return message
}
