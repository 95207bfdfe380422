package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// realNodes are the real nodes of a cluster and what they share on this host: each node is a
// kubelet with its own containerd, on the one CNI bridge; kube-proxy and CoreDNS, run once, serve
// them all. They change the host (kernel settings, netfilter rules, a bridge, mounts, cgroups):
// stop puts everything back as it was recorded.
type realNodes struct {
	paths  hostPaths
	bin    string // the bin/ folder that holds the node's build folders
	images string
	// backupImage is the image packed from the appkeeper binary, and backupTarball its archive,
	// which every node imports.
	backupImage, backupTarball string
	log                        func(msg string, kv ...any)
	lock                       *os.File
	was                        *HostState
	nodes                      []*realNode
	shared                     []*child // kube-proxy, CoreDNS
	stopVols                   context.CancelFunc
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

func (h *realNodes) binary(name string) string {
	for _, b := range nodeBinaries(h.bin) {
		if filepath.Base(b) == name {
			return b
		}
	}
	panic("unknown node binary " + name)
}

// prepareRealNodes checks that the host can run count nodes, puts back what earlier nodes left,
// records the host as found and writes the kubelets' client CA, which kube-apiserver needs when
// it starts.
func (c *Cluster) prepareRealNodes(count int) error {
	if os.Geteuid() != 0 {
		return errors.New("a real node needs root: it runs containers, changes netfilter rules and mounts volumes; run as root, or without --real-node for simulated nodes only")
	}
	if count > MaxRealNodes {
		return fmt.Errorf("%d real nodes asked for: at most %d run on one host", count, MaxRealNodes)
	}
	bin := filepath.Dir(c.binDir)
	h := &realNodes{
		paths:  hostPaths{root: filepath.Join(c.Dir, "node")},
		bin:    bin,
		images: filepath.Join(bin, "images"),
		log:    func(msg string, kv ...any) { c.log.Info(msg, kv...) },
	}
	for i := range count {
		name := realNodeName(i)
		h.nodes = append(h.nodes, &realNode{name: name, index: i, paths: h.paths.node(i), host: h})
	}
	if missing := missingNodeParts(bin, h.images); len(missing) > 0 {
		return fmt.Errorf("the real node needs %v: run \"make node-deps node images\"", missing)
	}
	// Before the host changes: a binary the backup image cannot run stops the node here.
	appkeeper, err := backupImageBinary(c.appkeeper)
	if err != nil {
		return err
	}
	if err := h.lockHost(); err != nil {
		return err
	}
	c.real = h
	if err := h.recordHost(); err != nil {
		return err
	}
	if err := removeAll(h.paths.root); err != nil {
		return err
	}
	dirs := []string{h.paths.path("pki"), h.paths.volumes(), h.paths.path("images")}
	for _, n := range h.nodes {
		dirs = append(dirs, n.paths.cniConfDir(), n.paths.path("containerd"))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if h.backupImage, h.backupTarball, err = packBackupImage(appkeeper, h.paths.path("images")); err != nil {
		return err
	}
	return writeKubeletClientCerts(h.paths.clientCA(), h.paths.apiserverCert(), h.paths.apiserverKey())
}

// recordHost puts back what earlier nodes left, then records the host as found.
func (h *realNodes) recordHost() error {
	if was, err := loadHostState(); err == nil {
		h.log("restoring the host from a real node that was not stopped", "record", hostStatePath())
		killNodeProcesses(nil, was.NodeDir, recordedNodes(was))
		// The killed nodes' mounts are under their folder, which may not be this cluster's.
		if err := restoreHost(was, []string{was.NodeDir}); err != nil {
			return fmt.Errorf("restoring the host after an earlier real node: %w", err)
		}
	}
	was, err := ReadHostState()
	if err != nil {
		return err
	}
	record := *was
	record.NodeDir = h.paths.root
	for _, n := range h.nodes {
		record.Nodes = append(record.Nodes, n.name)
	}
	if err := saveHostState(&record); err != nil {
		return fmt.Errorf("recording the host's state in %s: %w", hostStateDir, err)
	}
	h.was = was
	return nil
}

// recordedNodes are the nodes a record of the host names; a record without names was written
// when the one node's pods were in the top-level kubepods group.
func recordedNodes(was *HostState) []string {
	if len(was.Nodes) == 0 {
		return []string{"kubepods"}
	}
	return was.Nodes
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

// lockHost makes sure one cluster's real nodes at a time run on this host: they would share the
// bridge, the kubelets' addresses and the netfilter rules.
func (h *realNodes) lockHost() error {
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
	h.lock = f
	return nil
}

// configureAPIServer lets kube-apiserver call the kubelets with a client certificate, and
// authorizes kubelets as nodes, limited to their own pods.
func (h *realNodes) configureAPIServer(api *envtest.APIServer) {
	api.Configure().Set("kubelet-client-certificate", h.paths.apiserverCert())
	api.Configure().Set("kubelet-client-key", h.paths.apiserverKey())
	api.Configure().Set("authorization-mode", "Node", "RBAC")
	api.Configure().Set("enable-admission-plugins", "NodeRestriction")
	// A node's name is not a host name this machine resolves; its address is.
	api.Configure().Set("kubelet-preferred-address-types", "InternalIP")
}

// startRealNodes runs the nodes' processes, each one once what it needs is there.
func (c *Cluster) startRealNodes(ctx context.Context) error {
	h := c.real
	began := time.Now()
	if err := c.writeNodeCredentials(ctx); err != nil {
		return err
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	if err := writeFiles(map[string]string{
		h.paths.proxyConfig(): proxyConfig(h.paths, ports[0], ports[1]),
		h.paths.corefile():    corefile(c.KubeconfigPath),
	}); err != nil {
		return err
	}
	// The bridge exists before any pod, so that the kubelets and CoreDNS can use its addresses.
	if err := createBridge(h.nodes); err != nil {
		return err
	}
	store, err := h.imageStore(ctx)
	if err != nil {
		return err
	}
	for _, n := range h.nodes {
		if err := n.start(ctx, c, store); err != nil {
			return fmt.Errorf("node %s: %w", n.name, err)
		}
	}
	for name, args := range map[string][]string{
		"kube-proxy": {"--config=" + h.paths.proxyConfig()},
		"coredns":    {"-conf", h.paths.corefile(), "-dns.port", "53"},
	} {
		ch, err := startChild(name, h.binary(name), args, nodeEnv(h), c.logPath(name))
		if err != nil {
			return err
		}
		h.shared = append(h.shared, ch)
	}
	volCtx, cancel := context.WithCancel(context.Background())
	h.stopVols = cancel
	go c.makeVolumeDirs(volCtx)
	h.log("real nodes started", "nodes", len(h.nodes), "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// nodeEnv lets containerd find its shim, and the shim runc, on PATH.
func nodeEnv(h *realNodes) []string {
	return append(os.Environ(), "PATH="+filepath.Dir(h.binary("containerd-shim-runc-v2"))+":"+os.Getenv("PATH"))
}

// writeNodeCredentials gives each kubelet and kube-proxy identities of their own, and lets
// kube-apiserver's kubelet client use the kubelets' API. Each kubelet reaches the API server
// through a relay of its own.
func (c *Cluster) writeNodeCredentials(ctx context.Context) error {
	h := c.real
	apiServer, err := url.Parse(c.Config.Host)
	if err != nil {
		return err
	}
	if err := c.writeCredentials(h.paths.proxyKubeconfig(), envtest.User{Name: "system:kube-proxy"}, ""); err != nil {
		return err
	}
	for _, n := range h.nodes {
		if n.relay == nil {
			if n.relay, err = startAPIRelay(apiServer.Host); err != nil {
				return fmt.Errorf("the API server relay of node %s: %w", n.name, err)
			}
		}
		user := envtest.User{Name: "system:node:" + n.name, Groups: []string{"system:nodes"}}
		if err := c.writeCredentials(n.paths.kubeletKubeconfig(), user, "https://"+n.relay.address()); err != nil {
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

// writeCredentials writes a kubeconfig for user to path, for the API server at server, or at the
// cluster's own address when server is empty.
func (c *Cluster) writeCredentials(path string, user envtest.User, server string) error {
	u, err := c.env.AddUser(user, c.Config)
	if err != nil {
		return fmt.Errorf("credentials for %s: %w", user.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	cfg := u.Config()
	if server != "" {
		cfg.Host = server
	}
	return writeKubeconfig(path, cfg)
}

func writeFiles(files map[string]string) error {
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

func freePorts(count int) ([]int, error) {
	ports := make([]int, count)
	for i := range ports {
		var err error
		if ports[i], err = FreePort(); err != nil {
			return nil, err
		}
	}
	return ports, nil
}

// createBridge makes the pods' bridge, with the first node's address as every pod's gateway and
// each other node's address beside it.
func createBridge(nodes []*realNode) error {
	cmds := [][]string{{"link", "add", bridgeName, "type", "bridge"}}
	for _, n := range nodes {
		cmds = append(cmds, []string{"addr", "add", n.address() + "/16", "dev", bridgeName})
	}
	cmds = append(cmds, []string{"link", "set", bridgeName, "up"})
	for _, args := range cmds {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %v: %w: %s", args, err, out)
		}
	}
	return nil
}

// killNodeProcesses ends the nodes under root: the kubelets first, so that they restart nothing,
// then every container and shim, then the daemons.
func killNodeProcesses(children []*child, root string, cgroups []string) {
	for _, g := range cgroups {
		// A frozen process dies of SIGKILL only once thawed.
		if group := filepath.Join(cgroupRoot, "freezer", g); exists(group) {
			_ = setFreezer(group, "THAWED")
		}
	}
	for _, ch := range children {
		if ch.name == "kubelet" {
			_ = ch.stop(stopGrace)
		}
	}
	_ = killUntilNone(100*time.Millisecond, 5*time.Second, func() []int {
		pids := shimsOf(filepath.Join(hostStateDir, containerdSocketPrefix), root)
		for _, g := range cgroups {
			pids = append(pids, cgroupProcesses(g)...)
		}
		return pids
	})
	_ = stopChildren(children)
}

// killUntilNone sends SIGKILL to the processes find lists, every interval, until it lists none;
// it gives up after timeout.
func killUntilNone(interval, timeout time.Duration, find func() []int) error {
	return wait.PollUntilContextTimeout(context.Background(), interval, timeout, true, func(context.Context) (bool, error) {
		pids := find()
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return len(pids) == 0, nil
	})
}

// shimsOf are the processes that containerds started for their pods, given a socket whose path
// begins with socket: they outlive containerd. Shims of a run before the sockets moved to the
// host's state folder were given one under root.
func shimsOf(socket, root string) []int {
	return processes(func(_ int, args []string) bool {
		return len(args) > 0 && filepath.Base(args[0]) == "containerd-shim-runc-v2" &&
			slices.ContainsFunc(args, func(a string) bool {
				return strings.HasPrefix(a, socket) || strings.HasPrefix(a, root+"/")
			})
	})
}

// stop ends the nodes' processes and puts the host back as it was.
func (h *realNodes) stop() error {
	if h.stopVols != nil {
		h.stopVols()
	}
	children := slices.Clone(h.shared)
	var cgroups []string
	for _, n := range h.nodes {
		children = append(children, n.children...)
		cgroups = append(cgroups, n.name)
	}
	killNodeProcesses(children, h.paths.root, cgroups)
	for _, n := range h.nodes {
		if n.relay != nil {
			n.relay.close()
		}
	}
	var err error
	if h.was != nil {
		err = restoreHost(h.was, []string{h.paths.root})
	}
	err = errors.Join(err, removeAll(h.paths.root))
	if h.lock != nil {
		_ = h.lock.Close()
	}
	return err
}

// ClusterResolver asks the real nodes' CoreDNS, on the pods' bridge, as a pod does: the host can
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
	if c.real == nil {
		return errors.New("the cluster has no real node")
	}
	for _, n := range c.real.nodes {
		if err := n.ctr(ctx, "images", "tag", "--force", source, target); err != nil {
			return fmt.Errorf("node %s: %w", n.name, err)
		}
	}
	return nil
}

// NodeAddress is the host's address on the real nodes' pod network: a server the host runs there
// (an object store for backups, say) is reachable from every pod. Empty without a real node.
func (c *Cluster) NodeAddress() string {
	if c.real == nil {
		return ""
	}
	return bridgeIP
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
