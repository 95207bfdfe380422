package conditions

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// The last lines of a container's log that name why it exits, in the words of the servers the
// operator runs (mysqld and mariadbd, nginx, memcached, Apache and PHP) and of the C library. A
// full disk is looked for first: a server that cannot write often goes on to refuse a part of its
// configuration it could not set up.
var (
	// Error 28 is ENOSPC in errno's words (mysqld's "Errcode: 28", InnoDB's "failed with error
	// 28"); a bare "error 28" is not: curl's, in PHP's warnings, is a timeout.
	diskFullLines = regexp.MustCompile(`(?i)no space left on device|disk full|out of disk space|` +
		`(errno|errcode)[:= ]+28\b|with error 28\b|\bENOSPC\b|quota exceeded`)
	badConfigLines = regexp.MustCompile(`(?i)unknown (variable|option)|unrecognized option|invalid option|` +
		`error while setting value|incorrect .* value|\[emerg\]|syntax error|invalid command|AH00526|` +
		`illegal argument|bad configuration|configuration file .* (invalid|error)`)
	// notices are the lines a server logs and goes on: mysqld warns of an option given with the
	// loose- prefix that it does not know, and starts.
	notices       = regexp.MustCompile(`\[(Warning|Note)\]`)
	missingObject = regexp.MustCompile(`(?i)^(secret|configmap) "([^"]+)" not found|` +
		`couldn't find key (\S+) in (Secret|ConfigMap) (\S+)`)
)

// stoppedCodes are the exit codes of a container that did not fail by itself: it ended cleanly (0,
// as mysqld and nginx do on the kubelet's SIGTERM) or was ended by SIGTERM (143) or SIGKILL (137).
var stoppedCodes = map[int32]bool{0: true, 128 + 9: true, 128 + 15: true}

// crashCause says why a container in CrashLoopBackOff keeps exiting, from the way it last ended:
// the kubelet's reason and exit code, and the last lines of its log, which the kubelet keeps as
// the termination message of a container whose policy is FallbackToLogsOnError. It is nil when
// that says nothing more than the back-off itself.
func crashCause(pod *corev1.Pod, cs corev1.ContainerStatus) *PodProblem {
	ended := cs.LastTerminationState.Terminated
	if ended == nil {
		return nil
	}
	at := fmt.Sprintf("pod %s: container %s: ", pod.Name, cs.Name)
	restarts := fmt.Sprintf(" (restarts: %d)", cs.RestartCount)
	if ended.Reason == "OOMKilled" {
		return &PodProblem{Reason: appsv1alpha1.ReasonOutOfMemory, Message: at + appsv1alpha1.ReasonOutOfMemory +
			": the kernel killed it for using more memory than " + memoryLimit(pod, cs.Name) + restarts}
	}
	if line := lastMatch(ended.Message, diskFullLines.MatchString); line != "" {
		return &PodProblem{Reason: appsv1alpha1.ReasonDiskFull, Message: fmt.Sprintf("%s%s: it exited with code %d, out of disk space: %q%s",
			at, appsv1alpha1.ReasonDiskFull, ended.ExitCode, line, restarts)}
	}
	if line := lastMatch(ended.Message, refusedConfig); line != "" {
		return &PodProblem{Reason: appsv1alpha1.ReasonBadConfiguration, Message: fmt.Sprintf("%s%s: it exited with code %d, refusing its configuration: %q%s",
			at, appsv1alpha1.ReasonBadConfiguration, ended.ExitCode, line, restarts)}
	}
	if probe := killingProbe(pod, cs.Name, ended); probe != "" {
		return &PodProblem{Reason: appsv1alpha1.ReasonProbeFailed, Message: fmt.Sprintf("%s%s: it ended (exit code %d) with no error of its own after %s, "+
			"long enough for its %s probe to fail: most likely the kubelet stopped it, and if the server is only slow, the probe is too tight for it%s",
			at, appsv1alpha1.ReasonProbeFailed, ended.ExitCode, ended.FinishedAt.Sub(ended.StartedAt.Time).Round(time.Second), probe, restarts)}
	}
	return nil
}

// CrashCauseSpec is what crashCause reads of a pod's spec: its containers' and init containers'
// names, memory limits and the timing of their startup and liveness probes. A cache of pods can
// keep that alone.
func CrashCauseSpec(spec corev1.PodSpec) corev1.PodSpec {
	return corev1.PodSpec{NodeName: spec.NodeName, Containers: causeFields(spec.Containers), InitContainers: causeFields(spec.InitContainers)}
}

func causeFields(containers []corev1.Container) []corev1.Container {
	if len(containers) == 0 {
		return nil
	}
	kept := make([]corev1.Container, len(containers))
	timing := func(p *corev1.Probe) *corev1.Probe {
		if p == nil {
			return nil
		}
		return &corev1.Probe{InitialDelaySeconds: p.InitialDelaySeconds, PeriodSeconds: p.PeriodSeconds, FailureThreshold: p.FailureThreshold}
	}
	for i, c := range containers {
		kept[i] = corev1.Container{Name: c.Name, StartupProbe: timing(c.StartupProbe), LivenessProbe: timing(c.LivenessProbe)}
		if limit, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			kept[i].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: limit}
		}
	}
	return kept
}

// missingReference turns a CreateContainerConfigError about a Secret or ConfigMap that does not
// exist, or lacks a key, into a reason naming which.
func missingReference(message string) string {
	m := missingObject.FindStringSubmatch(strings.TrimSpace(message))
	switch {
	case m == nil:
		return ""
	case strings.EqualFold(m[1], "secret") || strings.EqualFold(m[4], "secret"):
		return appsv1alpha1.ReasonSecretMissing
	default:
		return appsv1alpha1.ReasonConfigMapMissing
	}
}

// startupSettled is how long after its startup probe's time to fail a container can still be
// ending because of it: the kubelet's stop and the server's shutdown. A container that ran longer
// had passed its startup probe.
const startupSettled = time.Minute

// killingProbe names the probe that can have stopped a container which ended without an error of
// its own: its startup probe when it ran about as long as that probe takes to fail, else its
// liveness probe when it ran at least as long as that one takes. It is empty when no probe can
// have.
func killingProbe(pod *corev1.Pod, container string, ended *corev1.ContainerStateTerminated) string {
	c := containerOf(pod, container)
	if !stoppedCodes[ended.ExitCode] || c == nil {
		return ""
	}
	ran := ended.FinishedAt.Sub(ended.StartedAt.Time)
	switch {
	case c.StartupProbe != nil && ran >= timeToFail(c.StartupProbe) && ran < timeToFail(c.StartupProbe)+startupSettled:
		return "startup"
	case c.LivenessProbe != nil && ran >= timeToFail(c.LivenessProbe):
		return "liveness"
	}
	return ""
}

// containerOf is the named container or init container of pod, or nil.
func containerOf(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// timeToFail is the least time a probe takes to fail enough times in a row to stop its container,
// with the API server's defaults for the fields left unset.
func timeToFail(p *corev1.Probe) time.Duration {
	period, failures := p.PeriodSeconds, p.FailureThreshold
	if period == 0 {
		period = 10
	}
	if failures == 0 {
		failures = 3
	}
	return time.Duration(p.InitialDelaySeconds+period*(failures-1)) * time.Second
}

// memoryLimit tells the memory limit of a container, or says that it has none.
func memoryLimit(pod *corev1.Pod, container string) string {
	if c := containerOf(pod, container); c != nil {
		if limit, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			return "its limit of " + limit.String()
		}
	}
	return "its node could give, as it has no memory limit"
}

// lastExit tells how a container that fits no cause last ended: its exit code and the last line
// of its log, if it kept one.
func lastExit(ended *corev1.ContainerStateTerminated) string {
	if ended == nil {
		return ""
	}
	said := fmt.Sprintf("; it last exited with code %d", ended.ExitCode)
	if line := lastMatch(ended.Message, func(string) bool { return true }); line != "" {
		said += fmt.Sprintf(": %q", line)
	}
	return said
}

// refusedConfig tells a line of a server refusing its configuration from a notice it goes on after.
func refusedConfig(line string) bool {
	return badConfigLines.MatchString(line) && !notices.MatchString(line)
}

// lastMatch is the last line of a log, trimmed and not empty, that match keeps, cut to 200 bytes.
func lastMatch(log string, match func(line string) bool) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(lines[i]); line != "" && match(line) {
			if len(line) > 200 {
				line = line[:200] + "…"
			}
			return line
		}
	}
	return ""
}
