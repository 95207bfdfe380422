//go:build real

package real

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

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
	{name: "sluggard", reason: appsv1alpha1.ReasonProbeFailed, evidence: "whose startup probe fails", container: []string{
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
	for _, f := range injectedFaults {
		kubectl(t, podSetWithFault(f), "apply", "-n", ns, "-f", "-")
	}
	for _, f := range injectedFaults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			var told metav1.Condition
			var said []string
			defer func() { t.Logf("%s: Degraded said, in turn: %q", f.name, said) }()
			await.Eventually(t, timeout, func(ctx context.Context) error {
				conditions, generation, err := conditionsOf(ctx, ns, "PodSet", f.name)
				if err != nil {
					return err
				}
				if err := await.ConditionIs(conditions, generation, appsv1alpha1.ConditionDegraded, metav1.ConditionTrue); err != nil {
					return err
				}
				for _, c := range conditions {
					if c.Type != appsv1alpha1.ConditionDegraded {
						continue
					}
					if len(said) == 0 || said[len(said)-1] != c.Message {
						said = append(said, c.Message)
					}
					if c.Reason != appsv1alpha1.ReasonCrashLoopBackOff {
						told = c
					}
				}
				if told.Reason == "" {
					return fmt.Errorf("Degraded says only CrashLoopBackOff")
				}
				return nil
			})
			// The count the message gives is the pod's when the operator told the cause.
			restarts := 0
			if m := restartsSaid.FindStringSubmatch(told.Message); m != nil {
				restarts, _ = strconv.Atoi(m[1])
			}
			t.Logf("%s: %s after %d restarts", f.name, told.Reason, restarts)
			if told.Reason != f.reason || !strings.Contains(told.Message, f.evidence) {
				t.Errorf("Degraded is %s: %q, want %s with %q", told.Reason, told.Message, f.reason, f.evidence)
			}
			if restarts > 2 {
				t.Errorf("the cause was told after %d restarts, want 2 at most", restarts)
			}
		})
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
