package backupjob

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/appkeeper/appkeeper/internal/kube"
)

// Get is the Job ns/name and those of its pods that carry selector's labels, or nil when the
// Job does not exist. The pods come from the cache, except for a Job that has finished while none
// of its cached pods shows a container that ended: the pod informer can lag the Job's, and the
// outcome is decided once, so the pods are then read from the API server.
func Get(ctx context.Context, c kube.Client, ns, name string, selector map[string]string) (*batchv1.Job, []corev1.Pod, error) {
	job := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("job %s/%s: %w", ns, name, err)
	}
	all, err := kube.ListPods(ctx, c, ns, selector)
	if err != nil {
		return nil, nil, fmt.Errorf("pods of job %s/%s: %w", ns, name, err)
	}
	pods := podsOfJob(all, name)
	if jobFinished(job) && !anyContainerEnded(pods) {
		live := &corev1.PodList{}
		if err := c.APIReader.List(ctx, live, client.InNamespace(ns), client.MatchingLabels(selector)); err != nil {
			return nil, nil, fmt.Errorf("pods of job %s/%s: %w", ns, name, err)
		}
		pods = podsOfJob(live.Items, name)
	}
	return job, pods, nil
}

// Delete deletes the Job ns/name and its pods, if it is there and not already going, and logs
// that it let go of held, the volume its pod kept in use.
func Delete(ctx context.Context, c client.Client, ns, name, held string) error {
	job := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); apierrors.IsNotFound(err) || err == nil && !job.DeletionTimestamp.IsZero() {
		return nil
	} else if err != nil {
		return fmt.Errorf("job %s/%s: %w", ns, name, err)
	}
	if err := c.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete the finished Job %s/%s: %w", ns, name, err)
	}
	log.FromContext(ctx).Info("deleted a finished Job, which held "+held, "job", name)
	return nil
}

func podsOfJob(all []corev1.Pod, job string) []corev1.Pod {
	var pods []corev1.Pod
	for _, p := range all {
		if p.Labels[batchv1.JobNameLabel] == job {
			pods = append(pods, p)
		}
	}
	return pods
}

func jobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func anyContainerEnded(pods []corev1.Pod) bool {
	for i := range pods {
		for _, s := range containerStatuses(&pods[i]) {
			if s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
				return true
			}
		}
	}
	return false
}
