package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// realNode is one real node: a kubelet and its own containerd, whose pods are in a cgroup of the
// node's name and have the addresses 10.88.<index>.0/24.
type realNode struct {
	name  string
	index int
	paths nodePaths
	host  *realNodes
	// children are containerd and the kubelet, in start order.
	children []*child
	// kubeletHealthz answers once the kubelet runs.
	kubeletHealthz string
	// relay passes the kubelet's connections to the API server.
	relay *apiRelay
}

// address is the node's own address on the bridge: the kubelet serves there.
func (n *realNode) address() string { return n.podAddress(1) }

func (n *realNode) podAddress(host int) string { return fmt.Sprintf("10.88.%d.%d", n.index, host) }

// podRange holds the addresses of the node's pods.
func (n *realNode) podRange() string { return fmt.Sprintf("10.88.%d.0/24", n.index) }

// logName names a log of the node's processes: the first node's are those of the one node
// before there could be more.
func (n *realNode) logName(process string) string {
	if n.index == 0 {
		return process
	}
	return process + "-" + n.name
}

// start runs the node's containerd on a root seeded from the image store, then its kubelet.
func (n *realNode) start(ctx context.Context, c *Cluster, store string) error {
	health, err := FreePort()
	if err != nil {
		return err
	}
	if err := writeFiles(map[string]string{
		n.paths.containerdConfig():                                   containerdConfig(n.paths),
		filepath.Join(n.paths.cniConfDir(), "10-appkeeper.conflist"): cniConfig(n),
		n.paths.kubeletConfig():                                      kubeletConfig(n, n.host.paths.clientCA(), health),
	}); err != nil {
		return err
	}
	if err := makeCgroup(n.name); err != nil {
		return err
	}
	if err := seedRoot(store, n.paths.containerdRoot()); err != nil {
		return err
	}
	n.kubeletHealthz = "http://127.0.0.1:" + strconv.Itoa(health) + "/healthz"
	return n.launch(ctx, c, n.importBackupImage)
}

// launch runs the node's containerd, then, once it answers and ready has run, its kubelet.
func (n *realNode) launch(ctx context.Context, c *Cluster, ready func(context.Context) error) error {
	containerd, err := n.run("containerd", []string{"--config", n.paths.containerdConfig()}, c.logPath(n.logName("containerd")))
	if err != nil {
		return err
	}
	if err := c.waitFor(ctx, "containerd of "+n.name, containerd.logPath, func(ctx context.Context) error {
		return n.ctr(ctx, "version")
	}); err != nil {
		return err
	}
	if err := ready(ctx); err != nil {
		return err
	}
	_, err = n.run("kubelet", []string{
		"--config=" + n.paths.kubeletConfig(), "--kubeconfig=" + n.paths.kubeletKubeconfig(),
		"--root-dir=" + n.paths.kubeletRoot(), "--cert-dir=" + n.paths.path("kubelet-pki"),
		"--hostname-override=" + n.name, "--node-ip=" + n.address(),
		"--node-labels=type=real",
	}, c.logPath(n.logName("kubelet")))
	return err
}

// run starts one of the node's daemons. Its log goes on after what an earlier run of the
// node, lost since, wrote.
func (n *realNode) run(name string, args []string, logPath string) (*child, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	ch, err := startChildLogging(name, n.host.binary(name), args, nodeEnv(n.host), f)
	if err != nil {
		return nil, err
	}
	n.children = append(n.children, ch)
	return ch, nil
}

// ctr runs containerd's client against the node's containerd, in the namespace the kubelet uses.
func (n *realNode) ctr(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, n.host.binary("ctr"), append([]string{"--address", n.paths.containerdSocket(), "--namespace", "k8s.io"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ctr %v: %w: %s", args, err, out)
	}
	return nil
}

// makeCgroup makes the top-level cgroup name under every controller, as the kubelet requires of
// its cgroup root. A new cpuset group has no CPUs or memory nodes until given its parent's.
func makeCgroup(name string) error {
	controllers, err := os.ReadDir(cgroupRoot)
	if err != nil {
		return err
	}
	var errs []error
	for _, ctl := range controllers {
		dir := filepath.Join(cgroupRoot, ctl.Name(), name)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			errs = append(errs, fmt.Errorf("making cgroup %s: %w", dir, err))
			continue
		}
		if !strings.HasPrefix(ctl.Name(), "cpuset") {
			continue
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(cgroupRoot, ctl.Name(), f))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, f), parent, 0o644)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("cgroup %s: %s: %w", dir, f, err))
			}
		}
	}
	return errors.Join(errs...)
}
