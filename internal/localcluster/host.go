package localcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// hostStateDir keeps what the real node must put back: tmpfs, so that it goes with a reboot, which
// also resets everything it records. A run that was killed before it could clean up leaves the file,
// and the next start of a real node, in any state directory, restores the host from it first.
const hostStateDir = "/run/appkeeper-real-node"

// nodeSysctls are the kernel settings the kubelet, kube-proxy and the bridge plugin change.
var nodeSysctls = []string{
	"vm.overcommit_memory",
	"kernel.panic",
	"kernel.panic_on_oops",
	"net.ipv4.ip_forward",
	"net.ipv4.conf.all.route_localnet",
	"net.bridge.bridge-nf-call-iptables",
	"net.bridge.bridge-nf-call-ip6tables",
	"net.ipv6.conf.all.forwarding",
	"net.netfilter.nf_conntrack_max",
	"net.netfilter.nf_conntrack_tcp_timeout_established",
	"net.netfilter.nf_conntrack_tcp_timeout_close_wait",
}

// nodeFixedPaths are the places outside its state directory that the node's components write to
// whatever they are told: the kubelet's container log links, the CNI plugins' cache, containerd's
// shim sockets and network namespaces.
var nodeFixedPaths = []string{
	"/var/log/containers",
	"/var/log/pods",
	"/var/lib/cni",
	"/run/containerd",
	"/run/netns",
	"/var/lib/kubelet",
	"/etc/cni",
	"/opt/cni",
}

// cgroupRoot is where the cgroup v1 controllers are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// HostState is what a real node may change on the host, as found at one moment.
type HostState struct {
	Sysctls map[string]string `json:"sysctls"`
	// Ruleset is the whole netfilter ruleset, as `nft list ruleset` prints it; the iptables commands
	// of Debian write through nftables, so their rules are in it too.
	Ruleset string `json:"ruleset"`
	// Links are the network interfaces.
	Links []string `json:"links"`
	// Paths are those of nodeFixedPaths that exist.
	Paths []string `json:"paths"`
	// Cgroups are the top-level groups of each controller, as controller/name.
	Cgroups []string `json:"cgroups"`
	// Mounts are the mount points.
	Mounts []string `json:"mounts"`
	// Processes are the running programs of a real node, as "name pid".
	Processes []string `json:"processes"`
	// NodeDir is, in the record the real nodes keep, the directory of their state.
	NodeDir string `json:"nodeDir,omitempty"`
	// Nodes are, in that record, the names of the real nodes: of their cgroups.
	Nodes []string `json:"nodes,omitempty"`
}

// nodePrograms are the programs of a real node that run as processes of the host.
var nodePrograms = []string{"containerd", "containerd-shim-runc-v2", "kubelet", "kube-proxy", "coredns"}

// ReadHostState reads the parts of the host a real node changes.
func ReadHostState() (*HostState, error) {
	s := &HostState{Sysctls: map[string]string{}}
	for _, name := range nodeSysctls {
		if v, err := os.ReadFile(sysctlPath(name)); err == nil {
			s.Sysctls[name] = strings.TrimSpace(string(v))
		}
	}
	ruleset, err := exec.Command("nft", "list", "ruleset").Output()
	if err != nil {
		return nil, fmt.Errorf("nft list ruleset: %w", commandError(err))
	}
	s.Ruleset = string(ruleset)
	ifaces, err := os.ReadDir("/sys/class/net")
	if err != nil {
		return nil, err
	}
	for _, i := range ifaces {
		s.Links = append(s.Links, i.Name())
	}
	for _, p := range nodeFixedPaths {
		if _, err := os.Lstat(p); err == nil {
			s.Paths = append(s.Paths, p)
		}
	}
	s.Cgroups = topCgroups()
	if s.Mounts, err = mountPoints(); err != nil {
		return nil, err
	}
	for _, pid := range processes(func(int, []string) bool { return true }) {
		if name := programName(pid); slices.Contains(nodePrograms, name) {
			s.Processes = append(s.Processes, fmt.Sprintf("%s %d", name, pid))
		}
	}
	return s, nil
}

// Diff lists how other differs from s, one line a difference; empty when they are the same.
func (s *HostState) Diff(other *HostState) []string {
	var out []string
	for _, name := range nodeSysctls {
		if s.Sysctls[name] != other.Sysctls[name] {
			out = append(out, fmt.Sprintf("sysctl %s: %q, was %q", name, other.Sysctls[name], s.Sysctls[name]))
		}
	}
	if s.Ruleset != other.Ruleset {
		out = append(out, "netfilter ruleset changed:\n"+other.Ruleset)
	}
	out = append(out, listDiff("network interface", s.Links, other.Links)...)
	out = append(out, listDiff("path", s.Paths, other.Paths)...)
	out = append(out, listDiff("cgroup", s.Cgroups, other.Cgroups)...)
	out = append(out, listDiff("mount", s.Mounts, other.Mounts)...)
	out = append(out, listDiff("process", s.Processes, other.Processes)...)
	return out
}

func listDiff(what string, before, after []string) []string {
	var out []string
	for _, a := range after {
		if !slices.Contains(before, a) {
			out = append(out, fmt.Sprintf("%s %s is new", what, a))
		}
	}
	for _, b := range before {
		if !slices.Contains(after, b) {
			out = append(out, fmt.Sprintf("%s %s is gone", what, b))
		}
	}
	return out
}

func sysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
}

func topCgroups() []string {
	var out []string
	controllers, _ := os.ReadDir(cgroupRoot)
	for _, c := range controllers {
		groups, _ := os.ReadDir(filepath.Join(cgroupRoot, c.Name()))
		for _, g := range groups {
			if g.IsDir() {
				out = append(out, c.Name()+"/"+g.Name())
			}
		}
	}
	return out
}

func hostStatePath() string { return filepath.Join(hostStateDir, "host-state.json") }

// saveHostState records the host as found before the node starts, unless a record is there
// already: then an earlier node did not clean up, and restoreHost must run first.
func saveHostState(s *HostState) error {
	if err := os.MkdirAll(hostStateDir, 0o700); err != nil {
		return err
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(hostStatePath(), data, 0o600)
}

func loadHostState() (*HostState, error) {
	data, err := os.ReadFile(hostStatePath())
	if err != nil {
		return nil, err
	}
	var s HostState
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", hostStatePath(), err)
	}
	return &s, nil
}

// restoreHost puts the host back as it was recorded, once every process of the node has ended:
// mounts under the node's directories go, then the interfaces, the netfilter ruleset and the
// sysctls come back, the cgroups and fixed paths the node made are removed. nodeDirs are the
// directories whose mounts are the node's.
func restoreHost(was *HostState, nodeDirs []string) error {
	var errs []error
	errs = append(errs, unmountUnder(nodeDirs, was.Mounts)...)
	now, err := ReadHostState()
	if err != nil {
		return err
	}
	for _, link := range now.Links {
		if !slices.Contains(was.Links, link) {
			// A pod's end of the bridge goes with its network namespace, maybe only now.
			if _, err := os.Stat(filepath.Join("/sys/class/net", link)); err != nil {
				continue
			}
			if out, err := exec.Command("ip", "link", "delete", link).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
				errs = append(errs, fmt.Errorf("deleting interface %s: %w: %s", link, err, out))
			}
		}
	}
	if now.Ruleset != was.Ruleset {
		errs = append(errs, restoreRuleset(was.Ruleset))
	}
	for name, value := range was.Sysctls {
		if now.Sysctls[name] != value {
			if err := os.WriteFile(sysctlPath(name), []byte(value), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restoring sysctl %s: %w", name, err))
			}
		}
	}
	for _, g := range now.Cgroups {
		if !slices.Contains(was.Cgroups, g) {
			errs = append(errs, removeCgroup(filepath.Join(cgroupRoot, g)))
		}
	}
	for _, p := range now.Paths {
		if !slices.Contains(was.Paths, p) {
			errs = append(errs, removeAll(p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.RemoveAll(hostStateDir)
}

func restoreRuleset(ruleset string) error {
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader("flush ruleset\n" + ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("restoring the netfilter ruleset: %w: %s", err, out)
	}
	return nil
}

func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// removeCgroup removes a cgroup v1 tree, children first; the kernel refuses rmdir of a group
// that still has processes, so the node's processes must have ended.
func removeCgroup(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, removeCgroup(filepath.Join(dir, e.Name())))
		}
	}
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
		errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// cgroupProcesses lists the processes in the groups named name under every controller.
func cgroupProcesses(name string) []int {
	var pids []int
	controllers, _ := os.ReadDir(cgroupRoot)
	for _, c := range controllers {
		_ = filepath.WalkDir(filepath.Join(cgroupRoot, c.Name(), name), func(path string, d os.DirEntry, err error) error {
			// A group that goes while it is walked, or is not there at all, holds no process.
			if err != nil {
				return nil //nolint:nilerr
			}
			if d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			data, _ := os.ReadFile(path)
			for _, f := range strings.Fields(string(data)) {
				var pid int
				if _, err := fmt.Sscan(f, &pid); err == nil && !slices.Contains(pids, pid) {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// removeAll removes a tree after detaching whatever is still mounted inside it.
func removeAll(path string) error {
	if errs := unmountUnder([]string{path}, nil); len(errs) > 0 {
		return errors.Join(errs...)
	}
	// The shims and containers just killed may still be letting go of their bundles.
	var err error
	if wait.ExponentialBackoff(wait.Backoff{Duration: 100 * time.Millisecond, Steps: 20}, func() (bool, error) {
		err = os.RemoveAll(path)
		return err == nil, nil
	}) == nil {
		return nil
	}
	return fmt.Errorf("removing %s: %w", path, err)
}

func commandError(err error) error {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exitErr.Stderr)))
	}
	return err
}

// programName is the file name of the program pid runs, or empty.
func programName(pid int) string {
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	if err != nil {
		return ""
	}
	return filepath.Base(strings.TrimSuffix(exe, " (deleted)"))
}
