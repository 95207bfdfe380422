package kubectlplugin

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// objectHealth says in a few words how a child is doing.
func objectHealth(obj client.Object) string {
	if obj.GetDeletionTimestamp() != nil {
		return "terminating"
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return fmt.Sprintf("%d/%d ready, %d updated", o.Status.ReadyReplicas, replicas(o.Spec.Replicas), o.Status.UpdatedReplicas)
	case *appsv1.StatefulSet:
		return fmt.Sprintf("%d/%d ready, %d updated", o.Status.ReadyReplicas, replicas(o.Spec.Replicas), o.Status.UpdatedReplicas)
	case *corev1.Pod:
		return podHealth(o)
	case *corev1.Service:
		return serviceHealth(o)
	case *corev1.ConfigMap:
		return keys(len(o.Data) + len(o.BinaryData))
	case *corev1.Secret:
		return keys(len(o.Data))
	case *corev1.PersistentVolumeClaim:
		return claimHealth(o)
	case *batchv1.Job:
		return jobHealth(o)
	case *appsv1alpha1.MySQLBackup:
		return backupHealth(o.Status.Phase, o.Status.Conditions, o.Status.Size, o.Status.Verification)
	case *appsv1alpha1.WordPressBackup:
		return backupHealth(o.Status.Phase, o.Status.Conditions, 0, "")
	}
	return ""
}

func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// podHealth is the phase, readiness, and the reason a container waits or ended, as kubectl get
// pods shows it.
func podHealth(pod *corev1.Pod) string {
	words := string(pod.Status.Phase)
	if words == "" {
		words = "Pending"
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return words + ": " + c.Reason + ": " + shorten(c.Message)
		}
	}
	for _, s := range pod.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("%s: container %s %s", words, s.Name, w.Reason)
		}
		if t := s.State.Terminated; t != nil && t.Reason != "" {
			return fmt.Sprintf("%s: container %s %s (exit %d)", words, s.Name, t.Reason, t.ExitCode)
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				return words + ", ready"
			}
			return words + ", not ready"
		}
	}
	return words
}

func serviceHealth(svc *corev1.Service) string {
	ports := make([]string, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
	}
	ip := svc.Spec.ClusterIP
	if ip == corev1.ClusterIPNone {
		ip = "headless"
	}
	return fmt.Sprintf("%s %s %s", svc.Spec.Type, ip, strings.Join(ports, ","))
}

func claimHealth(pvc *corev1.PersistentVolumeClaim) string {
	words := string(pvc.Status.Phase)
	if words == "" {
		words = "Pending"
	}
	if capacity, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
		words += ", " + capacity.String()
	} else if request, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		words += ", asks " + request.String()
	}
	if len(pvc.OwnerReferences) == 0 {
		words += ", retained (no owner)"
	}
	return words
}

func jobHealth(job *batchv1.Job) string {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return "Complete"
		case batchv1.JobFailed:
			return "Failed: " + reasonAndMessage(&metav1.Condition{Reason: c.Reason, Message: c.Message})
		}
	}
	return fmt.Sprintf("Running: %d active, %d failed", job.Status.Active, job.Status.Failed)
}

func backupHealth(phase appsv1alpha1.BackupPhase, conditions []metav1.Condition, size int64, verified appsv1alpha1.VerificationResult) string {
	words := string(phase)
	if words == "" {
		return "not yet observed by the operator"
	}
	switch phase {
	case appsv1alpha1.BackupSucceeded:
		if size > 0 {
			words += fmt.Sprintf(", %d bytes", size)
		}
		switch verified {
		case appsv1alpha1.VerificationPassed:
			words += ", verified"
		case appsv1alpha1.VerificationFailed:
			words += ", verification failed"
		default:
			if c := meta.FindStatusCondition(conditions, appsv1alpha1.ConditionVerified); c != nil && c.Status == metav1.ConditionUnknown && c.Reason != appsv1alpha1.ReasonVerificationFailed {
				words += ", verifying"
			}
		}
	default:
		if c := meta.FindStatusCondition(conditions, appsv1alpha1.ConditionComplete); c != nil && c.Message != "" {
			words += ": " + reasonAndMessage(c)
		}
	}
	return words
}

func keys(n int) string {
	if n == 1 {
		return "1 key"
	}
	return fmt.Sprintf("%d keys", n)
}
