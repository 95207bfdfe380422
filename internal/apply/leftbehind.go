package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// ClearLeftBehind is for a StatefulSet named name about to be applied: while it does not exist, it
// deletes the pods among pods that a deleted StatefulSet of that name left behind, and returns how
// long the StatefulSet is to wait for them to go before it is made, zero when it need not. Made before they
// are gone, it cannot make its pods of the same names; its controller retries with a back-off that
// grows with every attempt, and the pods' going does not wake it, as they name another
// StatefulSet. The garbage collector deletes such pods too, in its own time, which on a busy
// cluster can be a minute. A pod still terminating a minute past its grace period (on a node that
// stopped reporting, say) is not waited for longer.
//
// Only what the API server confirms is deleted: the StatefulSet must be gone there too, not only
// from the cache (which may not have seen it made yet), and each pod must still be as the cache holds it, naming the
// deleted StatefulSet as its controller. Pods a StatefulSet leaves on purpose (deleted with the
// orphan policy) lose that reference before it goes, and the new StatefulSet adopts them.
func ClearLeftBehind(ctx context.Context, c kube.Client, namespace, name string, pods []corev1.Pod) (wait time.Duration, err error) {
	var left []*corev1.Pod
	for i := range pods {
		if owner := metav1.GetControllerOf(&pods[i]); owner != nil && owner.Kind == "StatefulSet" && owner.Name == name {
			left = append(left, &pods[i])
		}
	}
	if len(left) == 0 {
		return 0, nil
	}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	if err := c.Get(ctx, key, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		// It exists: the pods are its own.
		return 0, err
	}
	if err := c.APIReader.Get(ctx, key, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		// It exists, and the cache is behind.
		return 0, err
	}
	var deleted []string
	var errs []error
	for _, pod := range left {
		if pod.DeletionTimestamp != nil {
			if patience := time.Until(pod.DeletionTimestamp.Add(leftBehindPatience)); patience > 0 {
				wait = shortest(wait, patience)
			}
			continue
		}
		// Its deletion, or the change that kept it, starts the next pass; the recheck is a floor.
		wait = shortest(wait, leftBehindRecheck)
		// One gone or changed since the cache saw it is left: the next pass sees it as it is.
		switch done, err := DeleteUnchanged(ctx, c, pod); {
		case err != nil:
			errs = append(errs, fmt.Errorf("pod %s/%s left by a deleted StatefulSet: %w", pod.Namespace, pod.Name, err))
		case done:
			deleted = append(deleted, pod.Name)
		}
	}
	if len(deleted) > 0 {
		logf.FromContext(ctx).Info("deleting the pods a deleted StatefulSet left, to make it again once they are gone",
			"statefulSet", name, "pods", deleted)
	}
	return wait, errors.Join(errs...)
}

const (
	// leftBehindPatience is how long past its grace period a left pod is waited for.
	leftBehindPatience = time.Minute
	// leftBehindRecheck is when a pass looks again at pods it deleted or found changed.
	leftBehindRecheck = 5 * time.Second
)

// shortest is the shorter of two waits, zero meaning none.
func shortest(a, b time.Duration) time.Duration {
	if a == 0 {
		return b
	}
	return min(a, b)
}
