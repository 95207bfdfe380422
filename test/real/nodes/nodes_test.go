//go:build real

// Package nodes checks several real nodes on the one host as a cluster of machines: each node's
// pods on its own addresses, traffic between nodes as between machines, and the faults a node can
// have (a partition, a hang, a loss) doing to its pods what they do to a machine's.
package nodes

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

func TestThreeRealNodes(t *testing.T) {
	before := testcluster.HostState(t)
	// Cleanups run last first: this one once the cluster has stopped.
	t.Cleanup(func() {
		if diff := before.Diff(testcluster.HostState(t)); len(diff) > 0 {
			t.Errorf("the stopped cluster left the host changed:\n%s", strings.Join(diff, "\n"))
		}
	})
	n := startNodes(t)
	t.Run("pods on different nodes reach each other by their own addresses", n.podsReachEachOther)
	t.Run("a partitioned node's pods are cut off from the other nodes' until it heals", n.partitionHeals)
	t.Run("a fault of a node the cluster does not have is refused, naming the nodes", n.unknownFaultsRefused)
	t.Run("a hung node's pods answer nothing until it thaws", n.hangThaws)
	t.Run("a node cut off from the API server turns NotReady while its pods run on, until it heals", n.apiServerCutHeals)
	t.Run("a lost node's pods stop answering and the node turns NotReady", n.lossTurnsNotReady)
	t.Run("a lost node restarted is Ready again and runs its pods again", n.restartRunsPodsAgain)
}

// nodesUnderTest is a cluster of three real nodes with a web server on each and a client on the
// first.
type nodesUnderTest struct {
	cluster *localcluster.Cluster
	cl      client.Client
	names   []string
	webs    []*corev1.Pod
	caller  *corev1.Pod
}

func startNodes(t *testing.T) *nodesUnderTest {
	cluster := startCluster(t)
	cl, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := &nodesUnderTest{cluster: cluster, cl: cl, names: cluster.RealNodeNames()}
	if len(n.names) != 3 {
		t.Fatalf("real nodes %v, want 3", n.names)
	}
	for i, node := range n.names {
		n.webs = append(n.webs, pod(fmt.Sprintf("web-%d", i), node, localcluster.LocalNginxImage))
	}
	n.caller = pod("client", n.names[0], localcluster.LocalBusyboxImage, "sleep", "3600")
	for _, p := range append(n.webs, n.caller) {
		if err := cl.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range append(n.webs, n.caller) {
		waitReady(t, cl, p)
	}
	for i, w := range n.webs {
		if want := fmt.Sprintf("10.88.%d.", i); !strings.HasPrefix(w.Status.PodIP, want) {
			t.Errorf("pod %s on %s has address %s, not in its node's range %s0/24", w.Name, n.names[i], w.Status.PodIP, want)
		}
	}
	return n
}

func (n *nodesUnderTest) kubectl(t *testing.T, args ...string) (string, error) {
	cmd := exec.CommandContext(t.Context(), filepath.Join(localcluster.DefaultBinDir(), "kubectl"), append([]string{"--kubeconfig", n.cluster.KubeconfigPath}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// reaches tells whether the client reaches target's web server.
func (n *nodesUnderTest) reaches(t *testing.T, target *corev1.Pod) bool {
	_, err := n.kubectl(t, "exec", n.caller.Name, "--", "timeout", "3", "wget", "-q", "-O", "/dev/null", "http://"+target.Status.PodIP+":8080/")
	return err == nil
}

// appkeeper runs appkeeper local node with args, as a person does by hand from another process
// than the cluster's.
func appkeeper(t *testing.T, args ...string) (string, error) {
	cmd := exec.CommandContext(t.Context(), appkeeperBinary(t), append([]string{"local", "node"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (n *nodesUnderTest) podsReachEachOther(t *testing.T) {
	for _, w := range n.webs {
		if !n.reaches(t, w) {
			t.Errorf("the client on %s cannot reach %s on %s", n.names[0], w.Name, w.Spec.NodeName)
		}
	}
	logs, err := n.kubectl(t, "logs", n.webs[2].Name)
	if err != nil {
		t.Fatalf("logs of a pod on %s, through its kubelet: %v: %s", n.names[2], err, logs)
	}
	if !strings.Contains(logs, n.caller.Status.PodIP) {
		t.Errorf("the server on %s saw the client as another address than the client's %s (masqueraded between nodes):\n%s", n.names[2], n.caller.Status.PodIP, logs)
	}
}

func (n *nodesUnderTest) partitionHeals(t *testing.T) {
	if out, err := appkeeper(t, "partition", n.names[1]); err != nil {
		t.Fatalf("appkeeper local node partition: %v: %s", err, out)
	}
	if n.reaches(t, n.webs[1]) {
		t.Errorf("the client reached %s across the partition", n.webs[1].Name)
	}
	if !n.reaches(t, n.webs[2]) || !n.reaches(t, n.webs[0]) {
		t.Error("the partition of one node cut the others off too")
	}
	if out, err := appkeeper(t, "heal", n.names[1]); err != nil {
		t.Fatalf("appkeeper local node heal: %v: %s", err, out)
	}
	if !n.reaches(t, n.webs[1]) {
		t.Errorf("%s still cut off once healed", n.webs[1].Name)
	}
}

func (n *nodesUnderTest) unknownFaultsRefused(t *testing.T) {
	out, err := appkeeper(t, "lose", "real-node-9")
	if err == nil || !strings.Contains(out, n.names[2]) {
		t.Errorf("losing a node that does not exist: %v: %s", err, out)
	}
	if out, err := appkeeper(t, "melt", n.names[0]); err == nil || !strings.Contains(out, "lose, hang, partition or heal") {
		t.Errorf("an unknown fault: %v: %s", err, out)
	}
}

func (n *nodesUnderTest) hangThaws(t *testing.T) {
	hung := make(chan error, 1)
	go func() { hung <- n.cluster.HangNode(t.Context(), n.names[2], 8*time.Second) }()
	// The freezer is in place within a moment; a request then waits for a frozen server.
	time.Sleep(time.Second)
	if n.reaches(t, n.webs[2]) {
		t.Errorf("%s answered while its node was frozen", n.webs[2].Name)
	}
	if err := <-hung; err != nil {
		t.Fatal(err)
	}
	if !n.reaches(t, n.webs[2]) {
		t.Errorf("%s does not answer once its node thawed", n.webs[2].Name)
	}
}

func (n *nodesUnderTest) apiServerCutHeals(t *testing.T) {
	node, web := n.names[1], n.webs[1]
	if out, err := appkeeper(t, "partition", node, "--from-api-server"); err != nil {
		t.Fatalf("appkeeper local node partition --from-api-server: %v: %s", err, out)
	}
	cut := time.Now()
	heal := sync.OnceFunc(func() {
		if out, err := appkeeper(t, "heal", node); err != nil {
			t.Errorf("appkeeper local node heal: %v: %s", err, out)
		}
	})
	t.Cleanup(heal)
	if out, err := n.kubectl(t, "logs", "--request-timeout=5s", web.Name); err == nil {
		t.Errorf("the API server read the logs of %s through its kubelet, cut off: %s", web.Name, out)
	}
	if err := n.waitReady(t, node, false); err != nil {
		t.Fatalf("node %s still Ready, its kubelet cut off from the API server: %v", node, err)
	}
	notReady := time.Since(cut)
	if err := reachesFromHost(t, web); err != nil {
		t.Errorf("%s stopped serving while its kubelet was cut off from the API server: %v", web.Name, err)
	}
	heal()
	if err := n.waitReady(t, node, true); err != nil {
		t.Fatalf("node %s not Ready again once healed: %v", node, err)
	}
	t.Logf("%s NotReady %s after its kubelet was cut off from the API server, its pod serving all along; Ready again %s after the heal",
		node, notReady.Round(time.Second), time.Since(cut.Add(notReady)).Round(time.Second))
	if out, err := n.kubectl(t, "logs", web.Name); err != nil {
		t.Errorf("logs of %s through its kubelet once healed: %v: %s", web.Name, err, out)
	}
}

// reachesFromHost asks target's web server from this host, where the kubelets run.
func reachesFromHost(t *testing.T, target *corev1.Pod) error {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+target.Status.PodIP+":8080/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (n *nodesUnderTest) lossTurnsNotReady(t *testing.T) {
	if err := n.cluster.LoseNode(n.names[2]); err != nil {
		t.Fatal(err)
	}
	if n.reaches(t, n.webs[2]) {
		t.Errorf("%s answered after its node was lost", n.webs[2].Name)
	}
	if !n.reaches(t, n.webs[1]) {
		t.Error("the loss of one node cut another off")
	}
	// The node's lease expires after kube-controller-manager's grace period, 50 s by default.
	if err := n.waitReady(t, n.names[2], false); err != nil {
		t.Errorf("node %s still Ready after its loss: %v", n.names[2], err)
	}
}

func (n *nodesUnderTest) restartRunsPodsAgain(t *testing.T) {
	if err := n.cluster.RestartNode(t.Context(), n.names[2]); err != nil {
		t.Fatal(err)
	}
	if err := n.waitReady(t, n.names[2], true); err != nil {
		t.Fatalf("node %s not Ready again after its restart: %v", n.names[2], err)
	}
	waitReady(t, n.cl, n.webs[2])
	if !n.reaches(t, n.webs[2]) {
		t.Errorf("%s does not answer once its node restarted", n.webs[2].Name)
	}
	if err := n.cluster.RestartNode(t.Context(), n.names[2]); err == nil || !strings.Contains(err.Error(), "only a lost node") {
		t.Errorf("restarting a node that runs: %v, want it refused", err)
	}
}

// waitReady waits until the node's Ready condition is True, or, with !ready, anything else.
func (n *nodesUnderTest) waitReady(t *testing.T, name string, ready bool) error {
	return wait.PollUntilContextTimeout(t.Context(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var node corev1.Node
		if err := n.cl.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
			return false, err
		}
		isReady := slices.ContainsFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool {
			return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		})
		return isReady == ready, nil
	})
}

func appkeeperBinary(t *testing.T) string {
	t.Helper()
	appkeeper := filepath.Join(filepath.Dir(localcluster.DefaultBinDir()), "appkeeper")
	if _, err := os.Stat(appkeeper); err != nil {
		t.Fatalf("%s: run \"make build\" first", appkeeper)
	}
	return appkeeper
}

func startCluster(t *testing.T) *localcluster.Cluster {
	t.Helper()
	appkeeper := appkeeperBinary(t)
	dir, err := os.MkdirTemp("", "appkeeper-nodes-")
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	progress := funcr.New(func(_, args string) { t.Log("local cluster:", args) }, funcr.Options{})
	cluster, err := localcluster.Start(t.Context(), localcluster.Options{Dir: dir, Nodes: 1, RealNodes: 3, AppkeeperBinary: appkeeper, Log: progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster with 3 real nodes ready in %s", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Errorf("stopping the cluster: %v", err)
		}
		if t.Failed() {
			t.Log("cluster state and logs kept:", dir)
			return
		}
		if err := localcluster.RemoveState(dir); err != nil {
			t.Error(err)
		}
	})
	return cluster
}

func pod(name, node, image string, command ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: new(int64),
			Containers:                    []corev1.Container{{Name: "main", Image: image, Command: command}},
		},
	}
}

func waitReady(t *testing.T, cl client.Client, p *corev1.Pod) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("pod %s not Ready on %s: %v (phase %s)", p.Name, p.Spec.NodeName, err, p.Status.Phase)
	}
}
