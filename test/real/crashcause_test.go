//go:build real

package real

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// A fault injected into a pod of a PodSet, and the Degraded reason and evidence it must be told by.
// A configuration a server refuses is injected into mysqld by the MySQL rollback test.
type injectedFault struct {
	name, reason, evidence string
	// container holds the YAML lines of the pod's one container besides its name, image and
	// security context; volumes, when set, is the pod's volumes.
	container []string
	volumes   string
}

var injectedFaults = []injectedFault{
	{name: "hog", reason: appsv1alpha1.ReasonOutOfMemory, evidence: "more memory than its limit of 24Mi", container: []string{
		`command: ["sh", "-c", "held=$(head -c 100000000 /dev/zero | tr '\\0' x); sleep 3600"]`,
		`resources: {limits: {memory: 24Mi}}`}},
	{name: "filler", reason: appsv1alpha1.ReasonDiskFull, evidence: "No space left on device", container: []string{
		// A second passes between the error and the exit, as it does for a server that shuts down,
		// so that the runtime has written the line to the log when the kubelet reads its end.
		`command: ["sh", "-c", "dd if=/dev/zero of=/scratch/fill bs=256k count=16 && exec sleep 3600; sleep 1; exit 1"]`,
		`volumeMounts: [{name: scratch, mountPath: /scratch}]`},
		volumes: `[{name: scratch, emptyDir: {medium: Memory, sizeLimit: 1Mi}}]`},
	{name: "orphan", reason: appsv1alpha1.ReasonSecretMissing, evidence: `secret "never-made" not found`, container: []string{
		`command: ["sleep", "3600"]`,
		`env: [{name: TOKEN, valueFrom: {secretKeyRef: {name: never-made, key: token}}}]`}},
	{name: "sluggard", reason: appsv1alpha1.ReasonProbeFailed, evidence: "long enough for its startup probe to fail", container: []string{
		`command: ["sh", "-c", "sleep 30; touch /tmp/up; exec sleep 3600"]`,
		`startupProbe: {exec: {command: ["test", "-f", "/tmp/up"]}, periodSeconds: 1, failureThreshold: 3}`}},
}

var restartsSaid = regexp.MustCompile(`\(restarts: (\d+)\)$`)

// TestCrashLoopsAreToldByTheirCause runs a pod for each cause the operator tells a crash loop by,
// with the fault that causes it, and requires its PodSet's Degraded condition to name the cause,
// with the evidence, by the pod's second restart.
func TestCrashLoopsAreToldByTheirCause(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "causes", restricted)
	// Each fault is watched from its PodSet's creation, whenever the suite lets the subtests run:
	// the message's restart count follows the pod, so only the first message tells when the cause
	// was first told.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	watched := map[string]chan causeTold{}
	for _, f := range injectedFaults {
		kubectl(t, podSetWithFault(f), "apply", "-n", ns, "-f", "-")
		watched[f.name] = make(chan causeTold, 1)
		go func() { watched[f.name] <- watchCause(ctx, ns, f.name) }()
	}
	for _, f := range injectedFaults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			told := <-watched[f.name]
			t.Logf("%s: Degraded said, in turn: %q", f.name, told.said)
			if told.err != nil {
				t.Fatalf("no cause told: %v", told.err)
			}
			restarts := 0
			if m := restartsSaid.FindStringSubmatch(told.first.Message); m != nil {
				restarts, _ = strconv.Atoi(m[1])
			}
			t.Logf("%s: %s after %d restarts", f.name, told.first.Reason, restarts)
			if told.first.Reason != f.reason || !strings.Contains(told.first.Message, f.evidence) {
				t.Errorf("Degraded is %s: %q, want %s with %q", told.first.Reason, told.first.Message, f.reason, f.evidence)
			}
			if restarts > 2 {
				t.Errorf("the cause was told %s after the PodSet was made, after %d restarts, want 2 at most; the pod's events:\n%s",
					told.after.Round(time.Second), restarts, podEvents(ns, f.name+"-0"))
			}
		})
	}
}

// causeTold is the first Degraded condition of a PodSet that names a cause, and what Degraded
// said before it.
type causeTold struct {
	first metav1.Condition
	after time.Duration
	said  []string
	err   error
}

// watchCause polls the PodSet name until its Degraded condition is True with a reason other than
// CrashLoopBackOff.
func watchCause(ctx context.Context, ns, name string) causeTold {
	var told causeTold
	began := time.Now()
	for {
		conditions, generation, err := conditionsOf(ctx, ns, "PodSet", name)
		if err == nil && await.ConditionIs(conditions, generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue) == nil {
			for _, c := range conditions {
				if c.Type != appsv1alpha1.ConditionDegraded {
					continue
				}
				if len(told.said) == 0 || told.said[len(told.said)-1] != c.Message {
					told.said = append(told.said, c.Message)
				}
				if c.Reason != appsv1alpha1.ReasonCrashLoopBackOff {
					told.first, told.after = c, time.Since(began)
					return told
				}
			}
		}
		select {
		case <-ctx.Done():
			told.err = fmt.Errorf("Degraded said only %q: %w", told.said, ctx.Err())
			return told
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// podSetWithFault is a PodSet of one busybox pod labelled with the fault's name, its container
// keeping the last lines of its log as its termination message.
func podSetWithFault(f injectedFault) string {
	volumes := ""
	if f.volumes != "" {
		volumes = "\n      volumes: " + f.volumes
	}
	container := strings.Join(f.container, "\n          ")
	return fmt.Sprintf(`
apiVersion: apps.appkeeper.dev/v1alpha1
kind: PodSet
metadata:
  name: %[1]s
spec:
  replicas: 1
  template:
    metadata:
      labels: {fault: %[1]s}
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 65534
        seccompProfile: {type: RuntimeDefault}
      terminationGracePeriodSeconds: 1%[4]s
      containers:
        - name: main
          image: %[2]s
          terminationMessagePolicy: FallbackToLogsOnError
          securityContext:
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
          %[3]s
`, f.name, busyboxImage, container, volumes)
}

// podEvents is what the kubelet and the scheduler told of pod, with when, for a cause told late:
// whether the kubelet restarted the container late, or the operator told it late.
func podEvents(ns, pod string) string {
	out, err := runKubectl("", "get", "events", "-n", ns, "--field-selector", "involvedObject.name="+pod, "--sort-by", ".lastTimestamp",
		"-o", "custom-columns=FIRST:.firstTimestamp,LAST:.lastTimestamp,COUNT:.count,REASON:.reason,MESSAGE:.message")
	if err != nil {
		return "unknown: " + err.Error()
	}
	return out
}
