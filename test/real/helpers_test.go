//go:build real

package real

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// kubectl runs the cluster's kubectl, as a user would, and returns its output.
func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := runKubectl(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// kubectlAppkeeper runs the kubectl plugin as built by make build, against the cluster.
func kubectlAppkeeper(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testcluster.RepoBinary("kubectl-appkeeper"), append([]string{"--kubeconfig", cluster.KubeconfigPath}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl appkeeper %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func runKubectl(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(localcluster.DefaultBinDir(), "kubectl"), append([]string{"--kubeconfig", cluster.KubeconfigPath}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// execIn runs command in the first container of pod and returns its output.
func execIn(t *testing.T, ns, pod string, command ...string) string {
	t.Helper()
	return kubectl(t, "", append([]string{"exec", "-n", ns, pod, "--"}, command...)...)
}

// waitAvailable waits until the appkeeper resource kind/name reports Available=True and
// Progressing=False for its current generation, and returns how long that took from since.
func waitAvailable(t *testing.T, ns, kind, name string, since time.Time) time.Duration {
	t.Helper()
	await.Eventually(t, timeout, func(ctx context.Context) error {
		conditions, generation, err := conditionsOf(ctx, ns, kind, name)
		if err != nil {
			return err
		}
		if err := await.ConditionIs(conditions, generation, appsv1alpha1.ConditionAvailable, metav1.ConditionTrue); err != nil {
			return fmt.Errorf("%s %s: %w", kind, name, err)
		}
		if err := await.ConditionIs(conditions, generation, appsv1alpha1.ConditionProgressing, metav1.ConditionFalse); err != nil {
			return fmt.Errorf("%s %s: %w", kind, name, err)
		}
		return nil
	})
	return time.Since(since).Round(time.Millisecond)
}

// conditionsOf reads the status conditions of the appkeeper resource kind/name, and its
// generation.
func conditionsOf(ctx context.Context, ns, kind, name string) ([]metav1.Condition, int64, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind(kind))
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return nil, 0, err
	}
	raw, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil {
		return nil, 0, err
	}
	var conditions []metav1.Condition
	for _, r := range raw {
		var c metav1.Condition
		m, _ := r.(map[string]any)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
			return nil, 0, err
		}
		conditions = append(conditions, c)
	}
	return conditions, obj.GetGeneration(), nil
}

// livePods lists the pods of ns matching labels that are not being deleted, and fails when any
// of them runs on another node than a real one.
func livePods(ctx context.Context, ns string, labels map[string]string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	var pods []corev1.Pod
	for _, pod := range list.Items {
		if pod.DeletionTimestamp != nil {
			continue
		}
		if pod.Spec.NodeName != "" && !slices.Contains(cluster.RealNodeNames(), pod.Spec.NodeName) {
			return nil, fmt.Errorf("pod %s runs on %s, want a real node", pod.Name, pod.Spec.NodeName)
		}
		pods = append(pods, pod)
	}
	return pods, nil
}

// waitPods waits until exactly want pods of ns match labels, none of them being deleted, each
// Running and Ready on the real node with image, and returns them.
func waitPods(t *testing.T, ns string, labels map[string]string, want int, image string) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	await.Eventually(t, timeout, func(ctx context.Context) error {
		list := &corev1.PodList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return err
		}
		if len(list.Items) != want {
			return fmt.Errorf("%d pods, want %d", len(list.Items), want)
		}
		var err error
		if pods, err = livePods(ctx, ns, labels); err != nil {
			return err
		}
		for _, pod := range list.Items {
			if err := podServing(&pod, image); err != nil {
				return err
			}
		}
		return nil
	})
	return pods
}

// podServing is nil when pod is not being deleted, runs image and is Running and Ready.
func podServing(pod *corev1.Pod, image string) error {
	switch {
	case pod.DeletionTimestamp != nil:
		return fmt.Errorf("pod %s is being deleted", pod.Name)
	case image != "" && pod.Spec.Containers[0].Image != image:
		return fmt.Errorf("pod %s runs %s, want %s", pod.Name, pod.Spec.Containers[0].Image, image)
	case pod.Status.Phase != corev1.PodRunning || !conditions.PodReady(pod):
		return fmt.Errorf("pod %s is %s, ready %t%s", pod.Name, pod.Status.Phase, conditions.PodReady(pod), waitingReason(pod))
	case pod.Status.PodIP == "":
		return fmt.Errorf("pod %s has no IP", pod.Name)
	}
	return nil
}

// waitingReason says why a pod's container is not running, for the messages of a wait.
func waitingReason(pod *corev1.Pod) string {
	for _, s := range pod.Status.ContainerStatuses {
		if s.State.Waiting != nil {
			return fmt.Sprintf(" (%s waiting: %s %s)", s.Name, s.State.Waiting.Reason, s.State.Waiting.Message)
		}
	}
	return ""
}

func getPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// restartCount is how often the kubelet restarted the first container of pod.
func restartCount(pod *corev1.Pod) int32 {
	if len(pod.Status.ContainerStatuses) == 0 {
		return 0
	}
	return pod.Status.ContainerStatuses[0].RestartCount
}

// killMainProcess sends SIGKILL, from the host, to the first process of the first container of
// pod: its pid 1. Inside the container the kernel ignores a SIGKILL to pid 1, so `kill -9 1` run
// through kubectl exec would do nothing.
func killMainProcess(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	signalMainProcess(t, pod, syscall.SIGKILL)
}

// signalMainProcess sends sig, from the host, to the first process of the first container of
// pod's spec (the kubelet lists the containers' statuses by name).
func signalMainProcess(t *testing.T, pod *corev1.Pod, sig syscall.Signal) {
	t.Helper()
	pid := mainProcess(t, pod)
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("kill -%d %d (pod %s): %v", sig, pid, pod.Name, err)
	}
	t.Logf("sent signal %d (%v) to pid %d, the main process of pod %s", sig, sig, pid, pod.Name)
}

// mainProcess is the host pid of the first process of the first container of pod's spec.
func mainProcess(t *testing.T, pod *corev1.Pod) int {
	t.Helper()
	id := ""
	for _, status := range pod.Status.ContainerStatuses {
		if status.Name == pod.Spec.Containers[0].Name {
			id = status.ContainerID
		}
	}
	if id == "" {
		t.Fatalf("pod %s has no status for its container %s", pod.Name, pod.Spec.Containers[0].Name)
	}
	_, id, _ = strings.Cut(id, "://")
	pid, err := containerInit(id)
	if err != nil {
		t.Fatalf("pod %s: %v", pod.Name, err)
	}
	return pid
}

// containerInit finds the host pid of the process that is pid 1 in the container id: the process
// of the container's cgroup whose pid in its own namespace is 1.
func containerInit(id string) (int, error) {
	if id == "" {
		return 0, errors.New("no container id")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cgroups, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err != nil || !strings.Contains(string(cgroups), id) {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(status), "\n") {
			if nspids, ok := strings.CutPrefix(line, "NSpid:"); ok {
				if f := strings.Fields(nspids); len(f) > 1 && f[len(f)-1] == "1" {
					return pid, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no process of container %s is its pid 1", id)
}

// httpClient asks once per connection, so that every request of a Service goes through
// kube-proxy's choice of a pod again, and gives up quickly.
var httpClient = &http.Client{
	Timeout:   3 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true, DialContext: dialCluster},
}

// dialCluster dials Service names (<service>.<namespace>.svc) through the cluster's DNS, as a pod
// would, and every other address directly: the host reaches Service and pod addresses.
func dialCluster(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(host, ".svc") {
		ips, err := localcluster.ClusterResolver.LookupHost(ctx, host+".cluster.local")
		if err != nil {
			return nil, err
		}
		address = net.JoinHostPort(ips[0], port)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// httpGet returns the body of a GET of url, or an error when it cannot be read or its status is not 200.
func httpGet(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	return do(req)
}

func do(req *http.Request) (string, error) { return doWith(httpClient, req) }

// doUnbounded is do with no time limit of the client's own: the request's context bounds it.
func doUnbounded(req *http.Request) (string, error) {
	unbounded := *httpClient
	unbounded.Timeout = 0
	return doWith(&unbounded, req)
}

func doWith(hc *http.Client, req *http.Request) (string, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("%s %s: %s", req.Method, req.URL, resp.Status)
	}
	return string(body), nil
}

// poller runs a probe at a fixed interval, as a client of a Service would, and counts the answers
// and the failures.
type poller struct {
	began  time.Time
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	ok       int
	failures []string
	// firstFailure and lastFailure are when the first and the last probe failed.
	firstFailure, lastFailure time.Time
}

// startPoller asks url every 50 ms and counts the answers that contain want and those that fail.
func startPoller(url, want string) *poller {
	return startProbing(50*time.Millisecond, func(ctx context.Context) error {
		body, err := httpGet(ctx, url)
		if err == nil && !strings.Contains(body, want) {
			err = fmt.Errorf("answer without %q", want)
		}
		return err
	})
}

// startProbing runs probe every interval, one at a time, until stop.
func startProbing(interval time.Duration, probe func(ctx context.Context) error) *poller {
	ctx, cancel := context.WithCancel(context.Background())
	p := &poller{began: time.Now(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			err := probe(ctx)
			if ctx.Err() != nil {
				return
			}
			p.record(err)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *poller) record(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.ok++
		return
	}
	p.lastFailure = time.Now()
	if p.firstFailure.IsZero() {
		p.firstFailure = p.lastFailure
	}
	p.failures = append(p.failures, time.Since(p.began).Round(time.Millisecond).String()+": "+err.Error())
}

// stop ends the polling and returns the counts.
func (p *poller) stop() (ok int, failures []string, lastFailure time.Time) {
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.failures, p.lastFailure
}

// clientPod starts a pod that sleeps, of image as uid, meeting the restricted pod security
// standard, on the real node, and returns its name once it runs.
func clientPod(t *testing.T, ns, name, image string, uid int64) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"role": "client"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			SecurityContext:               restrictedPodAs(uid),
			Containers: []corev1.Container{{
				Name: "client", Image: image, Command: []string{"sleep", "3600"},
				SecurityContext: parts.RestrictedSecurityContext(),
			}},
		},
	}
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	await.Eventually(t, timeout, func(ctx context.Context) error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		return podServing(pod, image)
	})
	return name
}

// restrictedPodAs is the restricted pod security context the operator gives its pods, as uid: the
// kubelet refuses runAsNonRoot for an image whose user it cannot see is not root.
func restrictedPodAs(uid int64) *corev1.PodSecurityContext {
	sc := parts.RestrictedPodSecurityContext()
	sc.RunAsUser = ptr.To(uid)
	return sc
}
