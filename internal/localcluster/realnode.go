package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Versions of the real node's parts; they must match the Makefile.
const (
	ContainerdVersion = "v2.4.2"
	CoreDNSVersion    = "v1.14.7"
)

// realNode is a kubelet with containerd, runc and the CNI bridge, kube-proxy and CoreDNS, run as
// processes of this host beside the control plane. It changes the host (kernel settings,
// netfilter rules, a bridge, mounts, cgroups): stop puts everything back as it was recorded.
type realNode struct {
	paths  nodePaths
	bin    string // the bin/ folder that holds the node's build folders
	images string
	// backupImage is the image packed from the appkeeper binary, and backupTarball its archive,
	// imported after the local images.
	backupImage, backupTarball string
	log                        func(msg string, kv ...any)
	lock                       *os.File
	was                        *HostState
	children                   []*child // in start order: containerd, kubelet, kube-proxy, CoreDNS
	stopVols                   context.CancelFunc
	// kubeletHealthz answers once the kubelet runs.
	kubeletHealthz string
}

// nodeBinaries are the node's programs that the build makes, by build folder.
func nodeBinaries(bin string) []string {
	node := filepath.Join(bin, "node-"+KubeVersion)
	containerd := filepath.Join(bin, "containerd-"+ContainerdVersion)
	return []string{
		filepath.Join(node, "kubelet"), filepath.Join(node, "kube-proxy"),
		filepath.Join(containerd, "containerd"), filepath.Join(containerd, "containerd-shim-runc-v2"), filepath.Join(containerd, "ctr"),
		filepath.Join(bin, "coredns-"+CoreDNSVersion, "coredns"),
	}
}

func (n *realNode) binary(name string) string {
	for _, b := range nodeBinaries(n.bin) {
		if filepath.Base(b) == name {
			return b
		}
	}
	panic("unknown node binary " + name)
}

// prepareRealNode checks that the host can run the node, puts back what an earlier node left,
// records the host as found and writes the kubelet's client CA, which kube-apiserver needs when
// it starts.
func (c *Cluster) prepareRealNode() error {
	if os.Geteuid() != 0 {
		return errors.New("a real node needs root: it runs containers, changes netfilter rules and mounts volumes; run as root, or without --real-node for simulated nodes only")
	}
	bin := filepath.Dir(c.binDir)
	n := &realNode{
		paths:  nodePaths{root: filepath.Join(c.Dir, "node")},
		bin:    bin,
		images: filepath.Join(bin, "images"),
		log:    func(msg string, kv ...any) { c.log.Info(msg, kv...) },
	}
	if missing := missingNodeParts(bin, n.images); len(missing) > 0 {
		return fmt.Errorf("the real node needs %v: run \"make node-deps node images\"", missing)
	}
	// Before the host changes: a binary the backup image cannot run stops the node here.
	appkeeper, err := backupImageBinary(c.appkeeper)
	if err != nil {
		return err
	}
	if err := n.lockHost(); err != nil {
		return err
	}
	c.node = n
	if was, err := loadHostState(); err == nil {
		n.log("restoring the host from a real node that was not stopped", "record", hostStatePath())
		earlier := &realNode{paths: nodePaths{root: was.NodeDir}}
		earlier.killProcesses()
		if err := restoreHost(was, []string{"/"}); err != nil {
			return fmt.Errorf("restoring the host after an earlier real node: %w", err)
		}
	}
	was, err := ReadHostState()
	if err != nil {
		return err
	}
	record := *was
	record.NodeDir = n.paths.root
	if err := saveHostState(&record); err != nil {
		return fmt.Errorf("recording the host's state in %s: %w", hostStateDir, err)
	}
	n.was = was
	if err := removeAll(n.paths.root); err != nil {
		return err
	}
	for _, d := range []string{n.paths.path("pki"), n.paths.cniConfDir(), n.paths.volumes(), n.paths.path("containerd"), n.paths.path("images")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if n.backupImage, n.backupTarball, err = packBackupImage(appkeeper, n.paths.path("images")); err != nil {
		return err
	}
	return writeKubeletClientCerts(n.paths.clientCA(), n.paths.apiserverCert(), n.paths.apiserverKey())
}

// missingNodeParts lists what the node needs and the host lacks: binaries, local images, tools.
func missingNodeParts(bin, images string) []string {
	var missing []string
	required := append(nodeBinaries(bin), runcPath, filepath.Join(cniBinDir, "bridge"))
	for _, f := range localImageFiles {
		required = append(required, filepath.Join(images, f))
	}
	for _, b := range required {
		if _, err := os.Stat(b); err != nil {
			missing = append(missing, b)
		}
	}
	for _, tool := range []string{"nft", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	return missing
}

// lockHost makes sure one real node at a time runs on this host: they would share the bridge,
// the kubelet's port and the netfilter rules.
func (n *realNode) lockHost() error {
	if err := os.MkdirAll(hostStateDir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(hostStateDir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return errors.New("another local cluster with a real node runs on this host")
	}
	n.lock = f
	return nil
}

// configureAPIServer lets kube-apiserver call the kubelet with a client certificate, and
// authorizes kubelets as nodes, limited to their own pods.
func (n *realNode) configureAPIServer(api *envtest.APIServer) {
	api.Configure().Set("kubelet-client-certificate", n.paths.apiserverCert())
	api.Configure().Set("kubelet-client-key", n.paths.apiserverKey())
	api.Configure().Set("authorization-mode", "Node", "RBAC")
	api.Configure().Set("enable-admission-plugins", "NodeRestriction")
	// The node's name is not a host name this machine resolves; its address is.
	api.Configure().Set("kubelet-preferred-address-types", "InternalIP")
}

// start runs the node's processes, each one once what it needs is there.
func (c *Cluster) startRealNode(ctx context.Context) error {
	n := c.node
	began := time.Now()
	err := c.writeNodeCredentials(ctx)
	if err != nil {
		return err
	}
	var ports [3]int
	for i := range ports {
		if ports[i], err = FreePort(); err != nil {
			return err
		}
	}
	kubeletHealth, proxyHealth, proxyMetrics := ports[0], ports[1], ports[2]
	if err := n.writeConfigs(kubeletHealth, proxyHealth, proxyMetrics, c.KubeconfigPath); err != nil {
		return err
	}
	// The bridge exists before any pod, so that the kubelet and CoreDNS can use its address.
	if err := createBridge(); err != nil {
		return err
	}
	if err := n.seedImages(ctx); err != nil {
		return err
	}
	containerd, err := n.start("containerd", []string{"--config", n.paths.containerdConfig()}, c.logPath("containerd"))
	if err != nil {
		return err
	}
	if err := c.waitFor(ctx, "containerd", containerd.logPath, func(ctx context.Context) error {
		return n.ctr(ctx, "version")
	}); err != nil {
		return err
	}
	if err := n.importBackupImage(ctx); err != nil {
		return err
	}
	if _, err := n.start("kubelet", []string{
		"--config=" + n.paths.kubeletConfig(), "--kubeconfig=" + n.paths.kubeletKubeconfig(),
		"--root-dir=" + n.paths.kubeletRoot(), "--cert-dir=" + n.paths.path("kubelet-pki"),
		"--hostname-override=" + RealNodeName, "--node-ip=" + bridgeIP,
		"--node-labels=type=real",
	}, c.logPath("kubelet")); err != nil {
		return err
	}
	if _, err := n.start("kube-proxy", []string{"--config=" + n.paths.proxyConfig()}, c.logPath("kube-proxy")); err != nil {
		return err
	}
	if _, err := n.start("coredns", []string{"-conf", n.paths.corefile(), "-dns.port", "53"}, c.logPath("coredns")); err != nil {
		return err
	}
	volCtx, cancel := context.WithCancel(context.Background())
	n.stopVols = cancel
	go c.makeVolumeDirs(volCtx)
	n.kubeletHealthz = "http://127.0.0.1:" + strconv.Itoa(kubeletHealth) + "/healthz"
	n.log("real node processes started", "took", time.Since(began).Round(time.Millisecond))
	return nil
}

func (n *realNode) start(name string, args []string, logPath string) (*child, error) {
	env := append(os.Environ(),
		// containerd finds its shim, and the shim runc, on PATH.
		"PATH="+filepath.Dir(n.binary("containerd-shim-runc-v2"))+":"+os.Getenv("PATH"))
	ch, err := startChild(name, n.binary(name), args, env, logPath)
	if err != nil {
		return nil, err
	}
	n.children = append(n.children, ch)
	return ch, nil
}

// writeNodeCredentials gives the kubelet and kube-proxy identities of their own, and lets
// kube-apiserver's kubelet client use the kubelet's API.
func (c *Cluster) writeNodeCredentials(ctx context.Context) error {
	n := c.node
	for path, user := range map[string]envtest.User{
		n.paths.kubeletKubeconfig(): {Name: "system:node:" + RealNodeName, Groups: []string{"system:nodes"}},
		n.paths.proxyKubeconfig():   {Name: "system:kube-proxy"},
	} {
		u, err := c.env.AddUser(user, c.Config)
		if err != nil {
			return fmt.Errorf("credentials for %s: %w", user.Name, err)
		}
		if err := writeKubeconfig(path, u.Config()); err != nil {
			return err
		}
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "appkeeper-local:kubelet-api-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:kubelet-api-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: kubeletClientUser}},
	}
	if err := cl.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("letting kube-apiserver call the kubelet: %w", err)
	}
	return nil
}

// writeConfigs writes the configuration of every node process; CoreDNS reads the cluster through
// the admin kubeconfig.
func (n *realNode) writeConfigs(kubeletHealth, proxyHealth, proxyMetrics int, kubeconfig string) error {
	files := map[string]string{
		n.paths.containerdConfig():                                   containerdConfig(n.paths),
		filepath.Join(n.paths.cniConfDir(), "10-appkeeper.conflist"): cniConfig(n.paths),
		n.paths.kubeletConfig():                                      kubeletConfig(n.paths, kubeletHealth),
		n.paths.proxyConfig():                                        proxyConfig(n.paths, proxyHealth, proxyMetrics),
		n.paths.corefile():                                           corefile(kubeconfig),
	}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

func createBridge() error {
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", bridgeIP + "/16", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v: %w: %s", args, err, out)
		}
	}
	return nil
}

// ctr runs containerd's client against the node's containerd, in the namespace the kubelet uses.
func (n *realNode) ctr(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, n.binary("ctr"), append([]string{"--address", n.paths.containerdSocket(), "--namespace", "k8s.io"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ctr %v: %w: %s", args, err, out)
	}
	return nil
}

// killProcesses ends the node: the kubelet first, so that it restarts nothing, then every
// container and shim, then the daemons.
func (n *realNode) killProcesses() {
	for _, ch := range n.children {
		if ch.name == "kubelet" {
			_ = ch.stop(stopGrace)
		}
	}
	_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		pids := append(cgroupProcesses("kubepods"), n.shims()...)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return len(pids) == 0, nil
	})
	_ = stopChildren(n.children)
}

// shims are the processes containerd started for the node's pods: they outlive containerd.
func (n *realNode) shims() []int {
	socket := n.paths.containerdSocket()
	return processes(func(_ int, args []string) bool {
		return len(args) > 0 && filepath.Base(args[0]) == "containerd-shim-runc-v2" && slices.Contains(args, socket)
	})
}

// stop ends the node's processes and puts the host back as it was.
func (n *realNode) stop() error {
	if n.stopVols != nil {
		n.stopVols()
	}
	n.killProcesses()
	var err error
	if n.was != nil {
		err = restoreHost(n.was, []string{n.paths.root})
	}
	err = errors.Join(err, removeAll(n.paths.root))
	if n.lock != nil {
		_ = n.lock.Close()
	}
	return err
}

// ClusterResolver asks the real node's CoreDNS, on the pods' bridge, as a pod does: the host can
// resolve the cluster's Service and pod names through it.
var ClusterResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort(bridgeIP, "53"))
}}

// dnsAnswers checks that CoreDNS resolves the API server's Service for the pods.
func dnsAnswers(ctx context.Context) error {
	_, err := ClusterResolver.LookupHost(ctx, "kubernetes.default.svc."+clusterDomain)
	return err
}

// TagImage gives an image of the real node a second name, as a push of the same image under a new
// tag would in a registry: an upgrade to it replaces the pods with the same content.
func (c *Cluster) TagImage(ctx context.Context, source, target string) error {
	if c.node == nil {
		return errors.New("the cluster has no real node")
	}
	return c.node.ctr(ctx, "images", "tag", "--force", source, target)
}

// NodeAddress is the host's address on the real node's pod network: a server the host runs there
// (an object store for backups, say) is reachable from every pod. Empty without a real node.
func (c *Cluster) NodeAddress() string {
	if c.node == nil {
		return ""
	}
	return bridgeIP
}
