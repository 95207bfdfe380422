package conditions

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The last lines of logs below are what the servers printed, run from this project's images'
// Debian packages: mariadbd 10.11 given an option it does not know, and started on a full volume;
// nginx given a directive it does not know; busybox's dd writing to a full tmpfs. The lines of
// mariadbd come from more than one run; only process IDs, times and the data folder's path are
// changed.
const (
	mariadbUnknownOption = `2026-11-29  1:10:25 0 [Warning] mariadbd: unknown variable 'loose-temptable_max_ram=64M'
2026-11-29  1:10:25 0 [Note] InnoDB: Loading buffer pool(s) from /var/lib/mysql/ib_buffer_pool
2026-11-29  1:10:25 0 [ERROR] mariadbd: unknown variable 'no_such_option=1'
2026-11-29  1:10:25 0 [ERROR] Aborting
`
	mariadbDiskFull = `2026-11-29  1:11:04 0 [ERROR] InnoDB: preallocating 12582912 bytes for file ./ibtmp1 failed with error 28
2026-11-29  1:11:04 0 [ERROR] InnoDB: Could not set the file size of './ibtmp1'. Probably out of disk space
2026-11-29  1:11:04 0 [ERROR] InnoDB: Unable to create the shared innodb_temporary
2026-11-29  1:11:04 0 [ERROR] InnoDB: Plugin initialization aborted with error Generic error
2026-11-29  1:11:04 0 [ERROR] Plugin 'InnoDB' registration as a STORAGE ENGINE failed.
2026-11-29  1:11:04 0 [ERROR] Unknown/unsupported storage engine: InnoDB
2026-11-29  1:11:04 0 [ERROR] Aborting
`
	nginxUnknownDirective = "2026/11/29 01:13:55 [emerg] 1#1: unknown directive \"listen_badly\" in /etc/nginx/conf.d/default.conf:2\n"
	ddNoSpace             = "dd: error writing '/scratch/fill': No space left on device\n5+0 records in\n4+0 records out\n" +
		"1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.00219814 s, 477 MB/s\n"
)

// crashLooping is a pod whose one container waits in CrashLoopBackOff after it last ended as
// ended says, having run for ran.
func crashLooping(container corev1.Container, ended corev1.ContainerStateTerminated, ran time.Duration) *corev1.Pod {
	finished := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	ended.StartedAt, ended.FinishedAt = metav1.NewTime(finished.Add(-ran)), metav1.NewTime(finished)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-0"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: container.Name, RestartCount: 2,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 20s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &ended},
		}}},
	}
}

// initLooping is crashLooping for an init container.
func initLooping(container corev1.Container, ended corev1.ContainerStateTerminated) *corev1.Pod {
	pod := crashLooping(container, ended, time.Second)
	pod.Spec.InitContainers, pod.Spec.Containers = pod.Spec.Containers, []corev1.Container{{Name: "server"}}
	pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses = pod.Status.ContainerStatuses, nil
	return pod
}

func TestCrashLoopsAreToldByTheirCause(t *testing.T) {
	limited := corev1.Container{Name: "mysql", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}
	probed := corev1.Container{Name: "main", Image: "busybox", Command: []string{"sh", "-c", "sleep 30"},
		StartupProbe: &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 2, ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}}
	lively := corev1.Container{Name: "nginx", LivenessProbe: &corev1.Probe{}}
	mysqld := corev1.Container{Name: "mysql", StartupProbe: &corev1.Probe{PeriodSeconds: 5, FailureThreshold: 60}, LivenessProbe: &corev1.Probe{}}
	tests := []struct {
		name      string
		pod       *corev1.Pod
		reason    string
		evidence  string
		container string
	}{
		{"killed for its memory", crashLooping(limited, corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}, time.Second),
			"OutOfMemory", "more memory than its limit of 64Mi (restarts: 2)", "mysql"},
		{"killed for its memory, with no limit", crashLooping(corev1.Container{Name: "main"}, corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}, time.Second),
			"OutOfMemory", "its node could give, as it has no memory limit", "main"},
		{"mysqld refusing an option", crashLooping(limited, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 7, Message: mariadbUnknownOption}, 2*time.Second),
			"BadConfiguration", `exited with code 7, refusing its configuration: "2026-11-29  1:10:25 0 [ERROR] mariadbd: unknown variable 'no_such_option=1'"`, "mysql"},
		{"mysqld on a full volume", crashLooping(limited, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: mariadbDiskFull}, 2*time.Second),
			"DiskFull", `out of disk space: "2026-11-29  1:11:04 0 [ERROR] InnoDB: Could not set the file size of './ibtmp1'. Probably out of disk space"`, "mysql"},
		{"nginx refusing a directive", crashLooping(lively, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: nginxUnknownDirective}, time.Second),
			"BadConfiguration", `[emerg] 1#1: unknown directive \"listen_badly\" in /etc/nginx/conf.d/default.conf:2"`, "nginx"},
		{"a command writing to a full volume", crashLooping(probed, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: ddNoSpace}, time.Second),
			"DiskFull", "No space left on device", "main"},
		{"stopped by its startup probe", crashLooping(probed, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137, Message: "starting\n"}, 3*time.Second),
			"ProbeFailed", "ended (exit code 137) with no error of its own after 3s, long enough for its startup probe to fail", "main"},
		{"a clean exit after the liveness probe's time", crashLooping(lively, corev1.ContainerStateTerminated{Reason: "Completed"}, 25*time.Second),
			"ProbeFailed", "long enough for its liveness probe to fail", "nginx"},
		{"killed by the liveness probe long after the startup probe passed", crashLooping(mysqld, corev1.ContainerStateTerminated{Reason: "Completed"}, 3*time.Hour),
			"ProbeFailed", "long enough for its liveness probe to fail", "mysql"},
		{"curl's error 28, a timeout, is no full disk", crashLooping(limited, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1,
			Message: "PHP Warning:  cURL error 28: Operation timed out after 10001 milliseconds\n"}, 5*time.Second),
			"CrashLoopBackOff", "cURL error 28", "mysql"},
		{"an init container killed for its memory", initLooping(limited, corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}),
			"OutOfMemory", "more memory than its limit of 64Mi", "mysql"},
		{"a clean exit sooner than a probe can fail", crashLooping(lively, corev1.ContainerStateTerminated{Reason: "Completed"}, 5*time.Second),
			"CrashLoopBackOff", "back-off 20s restarting failed container", "nginx"},
		{"killed with no probe", crashLooping(corev1.Container{Name: "main"}, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137}, time.Minute),
			"CrashLoopBackOff", "back-off 20s restarting failed container; it last exited with code 137", "main"},
		{"a crash after a notice of an unknown loose option", crashLooping(limited, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1,
			Message: "2026-11-29  1:29:59 0 [Warning] mariadbd: unknown variable 'loose-temptable_max_ram=64M'\n2026-11-29  1:30:02 0 [ERROR] InnoDB: Page [page id: space=5, page number=3] log sequence number 9 is in the future!\n"}, 5*time.Second),
			"CrashLoopBackOff", "it last exited with code 1: \"2026-11-29  1:30:02 0 [ERROR] InnoDB: Page", "mysql"},
		{"an error no cause names", crashLooping(probed, corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: "panic: boom\n\ngoroutine 1 [running]:\n"}, 5*time.Second),
			"CrashLoopBackOff", `back-off 20s restarting failed container; it last exited with code 1: "goroutine 1 [running]:"`, "main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cached := tt.pod.DeepCopy()
			cached.Spec = CrashCauseSpec(cached.Spec)
			for _, pod := range []*corev1.Pod{tt.pod, cached} {
				p := FindPodProblem(pod)
				prefix := "pod shop-0: container " + tt.container + ": " + tt.reason + ": "
				if p == nil || p.Reason != tt.reason || !strings.HasPrefix(p.Message, prefix) || !strings.Contains(p.Message, tt.evidence) {
					t.Errorf("FindPodProblem = %+v, want reason %s and a message starting %q with %q", p, tt.reason, prefix, tt.evidence)
				}
			}
		})
	}
}

func TestMissingReferencesAreNamed(t *testing.T) {
	for message, want := range map[string]string{
		`secret "shop-credentials" not found`:                              "SecretMissing",
		`couldn't find key password in Secret shop/shop-credentials`:       "SecretMissing",
		`configmap "shop-config" not found`:                                "ConfigMapMissing",
		`couldn't find key my.cnf in ConfigMap shop/shop-config`:           "ConfigMapMissing",
		`failed to sync secret cache: timed out waiting for the condition`: "CreateContainerConfigError",
	} {
		pod := waiting("shop-0", "mysql", "CreateContainerConfigError", message)
		if p := FindPodProblem(&pod); p == nil || p.Reason != want || p.Message != "pod shop-0: container mysql: "+want+": "+message {
			t.Errorf("FindPodProblem(%q) = %+v, want reason %s", message, p, want)
		}
	}
}
