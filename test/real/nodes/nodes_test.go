//go:build real

// Package nodes checks several real nodes on the one host as a cluster of machines: each node's
// pods on its own addresses, traffic between nodes as between machines, and the faults a node can
// have (a partition, a hang, a loss) doing to its pods what they do to a machine's.
package nodes

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
)

func TestThreeRealNodes(t *testing.T) {
	before, err := localcluster.ReadHostState()
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: this one once the cluster has stopped.
	t.Cleanup(func() {
		if diff := before.Diff(mustReadHostState(t)); len(diff) > 0 {
			t.Errorf("the stopped cluster left the host changed:\n%s", strings.Join(diff, "\n"))
		}
	})
	cluster := startCluster(t)
	ctx := t.Context()
	cl, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := cluster.RealNodeNames()
	if len(names) != 3 {
		t.Fatalf("real nodes %v, want 3", names)
	}
	// A web server on each node, and a client on the first.
	var webs []*corev1.Pod
	for i, node := range names {
		webs = append(webs, pod(fmt.Sprintf("web-%d", i), node, localcluster.LocalNginxImage))
	}
	caller := pod("client", names[0], localcluster.LocalBusyboxImage, "sleep", "3600")
	for _, p := range append(webs, caller) {
		if err := cl.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range append(webs, caller) {
		waitReady(t, cl, p)
	}
	for i, w := range webs {
		if want := fmt.Sprintf("10.88.%d.", i); !strings.HasPrefix(w.Status.PodIP, want) {
			t.Errorf("pod %s on %s has address %s, not in its node's range %s0/24", w.Name, names[i], w.Status.PodIP, want)
		}
	}
	kubectl := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(localcluster.DefaultBinDir(), "kubectl"), append([]string{"--kubeconfig", cluster.KubeconfigPath}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	reaches := func(target *corev1.Pod) bool {
		_, err := kubectl("exec", caller.Name, "--", "timeout", "3", "wget", "-q", "-O", "/dev/null", "http://"+target.Status.PodIP+":8080/")
		return err == nil
	}

	t.Run("pods on different nodes reach each other by their own addresses", func(t *testing.T) {
		for _, w := range webs {
			if !reaches(w) {
				t.Errorf("the client on %s cannot reach %s on %s", names[0], w.Name, w.Spec.NodeName)
			}
		}
		logs, err := kubectl("logs", webs[2].Name)
		if err != nil {
			t.Fatalf("logs of a pod on %s, through its kubelet: %v: %s", names[2], err, logs)
		}
		if !strings.Contains(logs, caller.Status.PodIP) {
			t.Errorf("the server on %s saw the client as another address than the client's %s (masqueraded between nodes):\n%s", names[2], caller.Status.PodIP, logs)
		}
	})

	// A person does it by hand with the command, from another process than the cluster's.
	appkeeper := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, appkeeperBinary(t), append([]string{"local", "node"}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Run("a partitioned node's pods are cut off from the other nodes' until it heals", func(t *testing.T) {
		if out, err := appkeeper("partition", names[1]); err != nil {
			t.Fatalf("appkeeper local node partition: %v: %s", err, out)
		}
		if reaches(webs[1]) {
			t.Errorf("the client reached %s across the partition", webs[1].Name)
		}
		if !reaches(webs[2]) || !reaches(webs[0]) {
			t.Error("the partition of one node cut the others off too")
		}
		if out, err := appkeeper("heal", names[1]); err != nil {
			t.Fatalf("appkeeper local node heal: %v: %s", err, out)
		}
		if !reaches(webs[1]) {
			t.Errorf("%s still cut off once healed", webs[1].Name)
		}
	})

	t.Run("a fault of a node the cluster does not have is refused, naming the nodes", func(t *testing.T) {
		out, err := appkeeper("lose", "real-node-9")
		if err == nil || !strings.Contains(out, names[2]) {
			t.Errorf("losing a node that does not exist: %v: %s", err, out)
		}
		if out, err := appkeeper("melt", names[0]); err == nil || !strings.Contains(out, "lose, hang, partition or heal") {
			t.Errorf("an unknown fault: %v: %s", err, out)
		}
	})

	t.Run("a hung node's pods answer nothing until it thaws", func(t *testing.T) {
		hung := make(chan error, 1)
		go func() { hung <- cluster.HangNode(ctx, names[2], 8*time.Second) }()
		// The freezer is in place within a moment; a request then waits for a frozen server.
		time.Sleep(time.Second)
		if reaches(webs[2]) {
			t.Errorf("%s answered while its node was frozen", webs[2].Name)
		}
		if err := <-hung; err != nil {
			t.Fatal(err)
		}
		if !reaches(webs[2]) {
			t.Errorf("%s does not answer once its node thawed", webs[2].Name)
		}
	})

	t.Run("a lost node's pods stop answering and the node turns NotReady", func(t *testing.T) {
		if err := cluster.LoseNode(names[2]); err != nil {
			t.Fatal(err)
		}
		if reaches(webs[2]) {
			t.Errorf("%s answered after its node was lost", webs[2].Name)
		}
		if !reaches(webs[1]) {
			t.Error("the loss of one node cut another off")
		}
		// The node's lease expires after kube-controller-manager's grace period, 50 s by default.
		err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			var n corev1.Node
			if err := cl.Get(ctx, client.ObjectKey{Name: names[2]}, &n); err != nil {
				return false, err
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					return c.Status != corev1.ConditionTrue, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Errorf("node %s still Ready after its loss: %v", names[2], err)
		}
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

func mustReadHostState(t *testing.T) *localcluster.HostState {
	t.Helper()
	s, err := localcluster.ReadHostState()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
