package localcluster

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	// RealNodeName is the first real node's name; pods land on the real nodes unless they ask for
	// the fake nodes. The nodes after it are real-node-2, real-node-3 and so on.
	RealNodeName = "real-node"
	// FakeNodeTaint keeps pods off the fake nodes while a real node runs: a pod that tolerates it
	// and selects the label type=kwok runs on kwok's simulated nodes instead.
	FakeNodeTaint = "kwok.x-k8s.io/node"
	// MaxRealNodes bounds the real nodes of one host: each takes about 135 MiB before its pods,
	// and a /24 of podCIDR.
	MaxRealNodes = 8

	// podCIDR is the bridge's network, clear of the Service range and of kwok's pod addresses.
	// Every real node's pods are on the one bridge; node i has the addresses 10.88.i.0/24, its
	// own 10.88.i.1, so that a rule can tell one node's traffic from another's.
	podCIDR = "10.88.0.0/16"
	// bridgeIP is the bridge's own address: the first node's address, every pod's gateway, and
	// where CoreDNS answers them.
	bridgeIP   = "10.88.0.1"
	bridgeName = "cni0"
	// clusterDomain is the DNS domain of Services.
	clusterDomain = "cluster.local"
	// PauseImage is the pod sandbox image, imported from the local images.
	PauseImage = "localhost/appkeeper/pause:3.10"
	// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
	cniBinDir = "/usr/lib/cni"
	runcPath  = "/usr/sbin/runc"
)

// realNodeName is the name of the real node of index i, from 0.
func realNodeName(i int) string {
	if i == 0 {
		return RealNodeName
	}
	return fmt.Sprintf("%s-%d", RealNodeName, i+1)
}

// hostPaths lays out what the real nodes share under one directory, which Stop removes: the
// kubelets' client CA, the volumes, the backup image, kube-proxy and CoreDNS, and a folder for
// each node.
type hostPaths struct{ root string }

func (p hostPaths) path(elem ...string) string {
	return filepath.Join(append([]string{p.root}, elem...)...)
}
func (p hostPaths) proxyConfig() string     { return p.path("kube-proxy.yaml") }
func (p hostPaths) proxyKubeconfig() string { return p.path("kube-proxy.kubeconfig") }
func (p hostPaths) corefile() string        { return p.path("Corefile") }
func (p hostPaths) clientCA() string        { return p.path("pki", "kubelet-client-ca.crt") }
func (p hostPaths) apiserverCert() string   { return p.path("pki", "apiserver-kubelet-client.crt") }
func (p hostPaths) apiserverKey() string    { return p.path("pki", "apiserver-kubelet-client.key") }

// Volumes holds the directories of the claims the real nodes mount. Every node of this host
// reaches every one, as nodes reach network storage.
func (p hostPaths) volumes() string { return p.path("volumes") }

// node lays out the node of index i, from 0, in a folder named by its number: the kubelet makes
// a socket in it, and a socket's path may not be longer than 107 bytes, however deep DIR is.
func (p hostPaths) node(i int) nodePaths {
	return nodePaths{root: p.path(strconv.Itoa(i + 1)), name: realNodeName(i)}
}

// nodePaths lays out one real node's containerd and kubelet.
type nodePaths struct{ root, name string }

func (p nodePaths) path(elem ...string) string {
	return filepath.Join(append([]string{p.root}, elem...)...)
}
func (p nodePaths) containerdConfig() string { return p.path("containerd", "config.toml") }

// containerdSocket is in the host's short state folder: a socket's path is limited to 107 bytes.
func (p nodePaths) containerdSocket() string {
	return filepath.Join(hostStateDir, containerdSocketPrefix+p.name+".sock")
}

// containerdSocketPrefix begins the name of every node's containerd socket, which its shims are
// given: they outlive containerd, and are found by it.
const containerdSocketPrefix = "containerd-"

func (p nodePaths) containerdRoot() string { return p.path("containerd", "root") }
func (p nodePaths) cniConfDir() string     { return p.path("cni", "net.d") }
func (p nodePaths) kubeletRoot() string    { return p.path("kubelet") }
func (p nodePaths) kubeletConfig() string  { return p.path("kubelet.yaml") }
func (p nodePaths) kubeletKubeconfig() string {
	return p.path("kubelet.kubeconfig")
}

// containerdConfig runs containerd with everything under the node's directory, without the
// plugin socket and configuration folders it would otherwise read or make on the host. The OOM score
// containerd gives sandboxes needs CAP_SYS_RESOURCE, which some virtual machines withhold from
// root; restricting it to the kubelet's own keeps pods starting there.
func containerdConfig(p nodePaths) string {
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q
imports = []

[plugins]
  [plugins.'io.containerd.server.v1.grpc']
    address = %[3]q
  [plugins.'io.containerd.server.v1.ttrpc']
    address = %[8]q
  [plugins.'io.containerd.internal.v1.opt']
    path = %[9]q
  [plugins.'io.containerd.nri.v1.nri']
    disable = true

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = %[4]q

  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = %[5]q
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [%[6]q]
      conf_dir = %[7]q
      max_conf_num = 1
`, p.path("containerd", "root"), p.path("containerd", "state"), p.containerdSocket(), PauseImage, runcPath, cniBinDir, p.cniConfDir(),
		p.containerdSocket()+".ttrpc", p.path("containerd", "opt"))
}

// cniConfig attaches the node's pods to the bridge, with addresses from the node's range of
// podCIDR kept under the node's directory, masquerading traffic that leaves podCIDR (not the
// traffic between nodes: a pod sees the address of the pod that called it), and hairpin mode so
// that a pod reaches itself through its Service.
func cniConfig(n *realNode) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "appkeeper",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[1]q,
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %[2]q, "gateway": %[3]q, "rangeStart": %[4]q, "rangeEnd": %[5]q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": %[6]q
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, bridgeName, podCIDR, bridgeIP, n.podAddress(2), n.podAddress(254), n.paths.path("cni", "ipam"))
}

// kubeletPort is where a kubelet serves its API, at its node's address: the kubelet's default.
const kubeletPort = 10250

// kubeletConfig is secure by default: no anonymous access, every request authorized by the API
// server, clients authenticated by the CA only kube-apiserver has a certificate of. The images
// cannot be pulled again, so the kubelet never collects them; the settings for cgroup v1 and the
// OOM score let it run on hosts that a production node would not be. Each node's pods are in a
// cgroup of the node's name, so that no kubelet takes another's pods for orphans.
func kubeletConfig(n *realNode, clientCA string, healthzPort int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[1]q
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
cgroupRoot: /%[8]s
failCgroupV1: false
containerRuntimeEndpoint: unix://%[2]s
clusterDomain: %[3]s
clusterDNS:
- %[4]s
address: %[7]s
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[5]d
oomScoreAdj: 0
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
podLogsDir: %[6]q
serializeImagePulls: false
failSwapOn: false
`, clientCA, n.paths.containerdSocket(), clusterDomain, bridgeIP, healthzPort, n.paths.path("pod-logs"), n.address(), n.name)
}

// proxyConfig runs kube-proxy in nftables mode, whose rules live in tables of its own; it leaves
// the conntrack settings of the host alone.
func proxyConfig(p hostPaths, healthzPort, metricsPort int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]q
mode: nftables
clusterCIDR: %[2]s
hostnameOverride: %[3]s
healthzBindAddress: 127.0.0.1:%[4]d
metricsBindAddress: 127.0.0.1:%[5]d
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, p.proxyKubeconfig(), podCIDR, RealNodeName, healthzPort, metricsPort)
}

// corefile answers the pods' queries for Services and pods from the API server, and forwards the
// rest to the host's resolvers.
func corefile(kubeconfig string) string {
	return fmt.Sprintf(`.:53 {
    bind %[1]s
    errors
    kubernetes %[2]s in-addr.arpa ip6.arpa {
        kubeconfig %[3]s appkeeper-local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
}
`, bridgeIP, clusterDomain, kubeconfig)
}

// realNodeStage is kwok's claim provisioning stage with the volumes put in the node's directory and
// required to exist: the cluster makes each one, writable by any user as the local volume
// provisioners of kind and k3s do, before the kubelet may mount it.
func realNodeStage(kwokStage []byte, volumes string) ([]byte, error) {
	const path, pathType = "/tmp/kwok-local-path-provisioner/", "type: DirectoryOrCreate"
	s := string(kwokStage)
	if !strings.Contains(s, path) || !strings.Contains(s, pathType) {
		return nil, fmt.Errorf("the kwok claim stage no longer provisions under %s", path)
	}
	s = strings.ReplaceAll(s, path, volumes+"/")
	return []byte(strings.ReplaceAll(s, pathType, "type: Directory")), nil
}
