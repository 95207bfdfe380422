package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// RealNodeNames are the names of the cluster's real nodes, the first one first.
func (c *Cluster) RealNodeNames() []string {
	if c.real == nil {
		return nil
	}
	var names []string
	for _, n := range c.real.nodes {
		names = append(names, n.name)
	}
	return names
}

func (c *Cluster) realNode(name string) (*realNode, error) {
	if c.real != nil {
		for _, n := range c.real.nodes {
			if n.name == name {
				return n, nil
			}
		}
	}
	return nil, fmt.Errorf("the cluster has no real node %q; it has %v", name, c.RealNodeNames())
}

// LoseNode ends a real node as a power cut would: its pods' traffic is dropped, then its kubelet,
// containerd, shims and containers are killed at once. The API server keeps believing in the node
// and its pods until the node's lease expires. The node does not come back.
func (c *Cluster) LoseNode(name string) error {
	n, err := c.realNode(name)
	if err != nil {
		return err
	}
	err = loseNode(n)
	for _, ch := range n.children {
		<-ch.done
		_ = ch.logFile.Close()
	}
	n.children = nil
	return err
}

func loseNode(n *realNode) error {
	// Cut first, so that no connection to the node's pods ends with a reset a power cut never sends.
	if err := cutNode(n, Partition{FromOtherNodes: true, FromHost: true}); err != nil {
		return err
	}
	err := killUntilNone(50*time.Millisecond, stopGrace, func() []int {
		pids := append(n.daemons(), shimsOf(n.paths.containerdSocket(), n.paths.root)...)
		return append(pids, cgroupProcesses(n.name)...)
	})
	if err != nil {
		return fmt.Errorf("node %s: its processes outlived SIGKILL: %w", n.name, err)
	}
	return nil
}

// RestartNode starts again a node that LoseNode ended, as power coming back would: its
// containerd and kubelet start on the state they left, and the kubelet starts again the pods the
// API server still binds to the node. The node's traffic flows again.
func (c *Cluster) RestartNode(ctx context.Context, name string) error {
	n, err := c.realNode(name)
	if err != nil {
		return err
	}
	if len(n.children) > 0 {
		return fmt.Errorf("node %s runs: only a lost node can be restarted", name)
	}
	if err := healNode(n); err != nil {
		return err
	}
	return n.launch(ctx, c, func(context.Context) error { return nil })
}

// daemons are the node's kubelet and containerd, found by the configuration files they were given.
func (n *realNode) daemons() []int {
	return processes(func(_ int, args []string) bool {
		name := filepath.Base(args[0])
		return (name == "kubelet" || name == "containerd") &&
			slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, n.paths.root+"/") })
	})
}

// Partition says what a partition of a node cuts: each field one link, any of them together.
type Partition struct {
	// FromOtherNodes cuts the node's pods off from the pods of every other node.
	FromOtherNodes bool
	// FromHost cuts the node's pods off from this host, where the control plane, the operator, the
	// kubelets' probes and a test's clients run.
	FromHost bool
	// FromAPIServer cuts the node's kubelet off from the API server, both ways: the node stops
	// reporting, and is found lost, while its pods run on.
	FromAPIServer bool
}

// PartitionNode drops the traffic of each link p cuts, connections already open included.
// HealNode ends the partition.
func (c *Cluster) PartitionNode(name string, p Partition) error {
	n, err := c.realNode(name)
	if err != nil {
		return err
	}
	return cutNode(n, p)
}

// HealNode ends a partition of the node.
func (c *Cluster) HealNode(name string) error {
	n, err := c.realNode(name)
	if err != nil {
		return err
	}
	return healNode(n)
}

func healNode(n *realNode) error { return nft("delete table inet " + partitionTable(n)) }

// partitionTable is the netfilter table of the node's partition; restoreHost removes it with
// the rest of the ruleset at stop.
func partitionTable(n *realNode) string {
	return "appkeeper_partition_" + strings.ReplaceAll(n.name, "-", "_")
}

func cutNode(n *realNode, p Partition) error {
	if p == (Partition{}) {
		return errors.New("a partition cuts at least one link: from the other nodes, from the host or from the API server")
	}
	own, table := n.podRange(), partitionTable(n)
	rules := []string{
		fmt.Sprintf("add table inet %s", table),
		fmt.Sprintf("add chain inet %s forward { type filter hook forward priority -10; policy accept; }", table),
		fmt.Sprintf("add chain inet %s input { type filter hook input priority -10; policy accept; }", table),
		fmt.Sprintf("add chain inet %s output { type filter hook output priority -10; policy accept; }", table),
	}
	if p.FromOtherNodes {
		rules = append(rules,
			fmt.Sprintf("add rule inet %s forward ip saddr %s ip daddr %s ip daddr != %s drop", table, own, podCIDR, own),
			fmt.Sprintf("add rule inet %s forward ip daddr %s ip saddr %s ip saddr != %s drop", table, own, podCIDR, own),
		)
	}
	if p.FromHost {
		rules = append(rules,
			fmt.Sprintf("add rule inet %s input ip saddr %s drop", table, own),
			fmt.Sprintf("add rule inet %s output ip daddr %s drop", table, own),
		)
	}
	if p.FromAPIServer {
		relay, err := kubeletRelayPort(n)
		if err != nil {
			return err
		}
		// Both ends of the kubelet's connections to its relay, and of the API server's to the
		// kubelet's server, are on this host: the output hook sees every packet of them.
		rules = append(rules,
			fmt.Sprintf("add rule inet %s output tcp dport %d drop", table, relay),
			fmt.Sprintf("add rule inet %s output tcp sport %d drop", table, relay),
			fmt.Sprintf("add rule inet %s output ip daddr %s tcp dport %d drop", table, n.address(), kubeletPort),
			fmt.Sprintf("add rule inet %s output ip saddr %s tcp sport %d drop", table, n.address(), kubeletPort),
		)
	}
	return nft(strings.Join(rules, "\n"))
}

func nft(script string) error {
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %w: %s", err, out)
	}
	return nil
}

// HangNode freezes the node's kubelet and every process of its pods for d, as a node stalled
// by its hypervisor or a dying disk, then thaws them: their clocks jump, their connections
// may have been given up by the other side, and a primary among them wakes believing it still is.
// A cancelled ctx thaws them early.
func (c *Cluster) HangNode(ctx context.Context, name string, d time.Duration) error {
	n, err := c.realNode(name)
	if err != nil {
		return err
	}
	return hangNode(ctx, n, d)
}

func hangNode(ctx context.Context, n *realNode, d time.Duration) error {
	var kubelet []int
	for _, pid := range n.daemons() {
		if programName(pid) == "kubelet" {
			kubelet = append(kubelet, pid)
		}
	}
	if len(kubelet) != 1 {
		return fmt.Errorf("node %s: want its one kubelet running, found %v", n.name, kubelet)
	}
	group := filepath.Join(cgroupRoot, "freezer", n.name)
	daemons := filepath.Join(group, "kubelet")
	if err := os.MkdirAll(daemons, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(daemons, "cgroup.procs"), []byte(strconv.Itoa(kubelet[0])), 0o644); err != nil {
		return fmt.Errorf("moving the kubelet of %s into its freezer group: %w", n.name, err)
	}
	if err := setFreezer(group, "FROZEN"); err != nil {
		return err
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	return setFreezer(group, "THAWED")
}

// setFreezer asks the freezer group for state and waits until the whole tree is in it.
func setFreezer(group, state string) error {
	path := filepath.Join(group, "freezer.state")
	if err := os.WriteFile(path, []byte(state), 0o644); err != nil {
		return fmt.Errorf("freezer %s: %w", group, err)
	}
	return wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		now, err := os.ReadFile(path)
		return strings.TrimSpace(string(now)) == state, err
	})
}

// NodeFault does to a real node of the cluster running on this host, whichever process runs it,
// what the Cluster method of the same name does: "lose", "hang" (for d), "partition" (p as
// PartitionNode's), "heal".
func NodeFault(ctx context.Context, fault, name string, d time.Duration, p Partition) error {
	was, err := loadHostState()
	if err != nil {
		return errors.New("no local cluster with a real node runs on this host")
	}
	index := slices.Index(was.Nodes, name)
	if index < 0 {
		return fmt.Errorf("the local cluster has no real node %q; it has %v", name, was.Nodes)
	}
	n := &realNode{name: name, index: index, paths: hostPaths{root: was.NodeDir}.node(index)}
	switch fault {
	case "lose":
		return loseNode(n)
	case "hang":
		return hangNode(ctx, n, d)
	case "partition":
		return cutNode(n, p)
	case "heal":
		return healNode(n)
	}
	return fmt.Errorf("unknown fault %q: lose, hang, partition or heal", fault)
}
