package backupjob

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/appkeeper/appkeeper/internal/backup"
)

// Outcome is what a Job's status and its pods' termination messages say.
type Outcome struct {
	Done, Failed bool
	// Attempts counts the failed pods.
	Attempts int32
	// Result is the reporting container's result, from the newest pod that left one.
	Result *backup.Result
	// Message explains a failure in a sentence, for the status and the Event.
	Message string
}

// Observe reads a Job's outcome; container is the one whose termination message carries the
// result, fallback the one whose result explains a failure before it ran (a fetch that failed).
func Observe(job *batchv1.Job, pods []corev1.Pod, container, fallback string) Outcome {
	out := Outcome{Attempts: job.Status.Failed}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			out.Done = true
		case batchv1.JobFailed:
			out.Done, out.Failed = true, true
			out.Message = fmt.Sprintf("%s: %s", c.Reason, c.Message)
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].CreationTimestamp.After(pods[j].CreationTimestamp.Time) })
	for i := range pods {
		if r := podResult(&pods[i], container); r != nil {
			out.Result = r
			break
		}
		if r := podResult(&pods[i], fallback); r != nil && r.Error != "" {
			out.Result = r
			break
		}
	}
	if out.Failed && out.Result != nil && out.Result.Error != "" {
		out.Message = out.Result.Error
	}
	return out
}

// podResult parses the termination message of the named container, when it ended and left one.
func podResult(pod *corev1.Pod, container string) *backup.Result {
	for _, s := range containerStatuses(pod) {
		if s.Name != container {
			continue
		}
		t := s.State.Terminated
		if t == nil {
			t = s.LastTerminationState.Terminated
		}
		if t == nil || strings.TrimSpace(t.Message) == "" {
			return nil
		}
		r := &backup.Result{}
		if err := json.Unmarshal([]byte(lastLine(t.Message)), r); err != nil {
			// Not a result: the log tail of a crash. Say so in a bounded sentence.
			return &backup.Result{Error: fmt.Sprintf("container %s exited %d: %s", container, t.ExitCode, bounded(t.Message, 300))}
		}
		return r
	}
	return nil
}

// containerStatuses are the statuses of pod's init containers, then of its containers.
func containerStatuses(pod *corev1.Pod) []corev1.ContainerStatus {
	return append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func bounded(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// ContainerFailure is why the named container of pod last failed, as its result says, or empty
// when it has not failed.
func ContainerFailure(pod *corev1.Pod, container string) string {
	for _, s := range containerStatuses(pod) {
		t := s.State.Terminated
		if t == nil {
			t = s.LastTerminationState.Terminated
		}
		if s.Name != container || t == nil || t.ExitCode == 0 {
			continue
		}
		if r := podResult(pod, container); r != nil && r.Error != "" {
			return r.Error
		}
		return fmt.Sprintf("container %s exited %d", container, t.ExitCode)
	}
	return ""
}
