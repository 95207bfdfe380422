package kubesim

import (
	"context"
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FinishJob plays the Job controller and the kubelet for job: it creates a pod of the Job whose
// container reported result, as JSON, as its termination message, then writes the Job's status,
// complete or failed.
func FinishJob(t *testing.T, c client.Client, job *batchv1.Job, container string, result any, succeeded bool) {
	t.Helper()
	ctx := context.Background()
	message, err := json.Marshal(result)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{batchv1.JobNameLabel: job.Name}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: job.Name + "-", Namespace: job.Namespace, Labels: labels},
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	exit, phase := int32(0), corev1.PodSucceeded
	if !succeeded {
		exit, phase = 1, corev1.PodFailed
	}
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: container, Image: "image",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: string(message) + "\n"}},
	}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	job.Status.StartTime = &now
	if succeeded {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	} else {
		job.Status.Failed = *job.Spec.BackoffLimit + 1
		const reason, why = "BackoffLimitExceeded", "Job has reached the specified backoff limit"
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: why, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: why, LastTransitionTime: now},
		}
	}
	if err := c.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}
