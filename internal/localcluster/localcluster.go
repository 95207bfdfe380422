// Package localcluster runs a real Kubernetes control plane on this machine from prebuilt
// binaries: etcd and kube-apiserver (through envtest), kube-controller-manager, kube-scheduler,
// and kwok, which plays the kubelet of fake nodes so that pods run without containers.
//
// Layout of Options.Dir:
//
//	kubeconfig         cluster-admin credentials, rewritten by every Start
//	logs/<name>.log    one log per component, kept after Stop
//	kwok-stages.yaml   the kwok stages in use
//	certs/ etcd/       certificates and etcd data of the running cluster, removed by Stop
//	lock               held while a cluster runs, so two clusters never share a directory
package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KubeVersion is the Kubernetes release of the binaries; it must match KUBE_VERSION in the Makefile.
const KubeVersion = "v1.36.3"

const defaultNodes = 3

// Options configures Start.
type Options struct {
	// Dir holds the cluster's state (see the package documentation); created if missing.
	Dir string
	// BinDir holds the binaries built by "make controlplane"; empty means DefaultBinDir().
	BinDir string
	// Nodes is the number of simulated nodes; zero means 3.
	Nodes int
	// CRDs are installed and Established before Start returns. None leaves the cluster without
	// custom resources, for an install that brings its own CRDs (dist/install.yaml, the Helm chart):
	// Helm refuses to take over CRDs it did not create.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Log receives progress lines; the zero value discards them.
	Log logr.Logger
	// RealNodes adds nodes whose pods really run: each a kubelet with its own containerd, and
	// kube-proxy and CoreDNS for them all, on this host, which needs root and the binaries and
	// images that "make node images" builds. Pods go to them unless they tolerate FakeNodeTaint;
	// Stop puts the host back as found. Zero adds none; at most MaxRealNodes.
	RealNodes int
	// AppkeeperBinary is a statically linked appkeeper binary (CGO_ENABLED=0) that a real node
	// packs into the image its backup Jobs run, Cluster.BackupImage; empty means the running
	// executable, which must then be the appkeeper command.
	AppkeeperBinary string
}

// Cluster is a running local control plane. Stop it to end its processes.
type Cluster struct {
	// Config connects as cluster-admin, with client-side rate limits high enough for benchmarks.
	Config *rest.Config
	// KubeconfigPath is the absolute path of a kubeconfig equivalent to Config.
	KubeconfigPath string
	// Dir is the absolute state directory.
	Dir string

	binDir    string
	appkeeper string
	nodes     int
	log       logr.Logger
	lock      *os.File
	env       *envtest.Environment
	envLogs   []*os.File
	children  []*child
	// apiServer is kube-apiserver as RestartAPIServer started it again; nil while envtest's runs.
	apiServer *child
	real      *realNodes

	stopOnce sync.Once
	stopErr  error
}

// DefaultBinDir is $KUBEBUILDER_ASSETS when set (as for envtest), else the folder
// controlplane-<KubeVersion> beside the running executable, where "make controlplane" puts it
// next to bin/appkeeper.
func DefaultBinDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	exe, err := os.Executable()
	if err != nil {
		return "controlplane-" + KubeVersion
	}
	return filepath.Join(filepath.Dir(exe), "controlplane-"+KubeVersion)
}

// Start starts a cluster and returns once it can run workloads: the controllers and the
// scheduler are healthy, every node is Ready, the CRDs are usable and pods can be admitted.
// On failure nothing it started is left running.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	began := time.Now()
	c, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	c.log.Info("starting etcd and kube-apiserver", "dir", c.Dir)
	if err := c.startAPIServer(); err != nil {
		return nil, err
	}
	// The CRDs are served before kube-controller-manager starts, so that its garbage collector
	// knows the custom resources from its first discovery instead of its 30 s resync.
	if err := c.installCRDs(opts.CRDs); err != nil {
		return nil, err
	}
	c.log.Info("starting kube-controller-manager, kube-scheduler and kwok")
	if err := c.startComponents(); err != nil {
		return nil, err
	}
	if c.real != nil {
		c.log.Info("starting the real nodes: containerd and kubelet for each, kube-proxy and CoreDNS", "nodes", len(c.real.nodes))
		if err := c.startRealNodes(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.createNodesAndStorage(ctx); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, opts.CRDs); err != nil {
		return nil, err
	}
	c.log.Info("local cluster ready", "took", time.Since(began).Round(time.Millisecond), "kubeconfig", c.KubeconfigPath)
	return c, nil
}

// prepare validates the options and lays out Dir for a fresh cluster.
func prepare(opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("local cluster: no state directory given")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("local cluster state directory %s: %w", opts.Dir, err)
	}
	c := &Cluster{Dir: dir, binDir: opts.BinDir, appkeeper: opts.AppkeeperBinary, nodes: opts.Nodes, log: opts.Log}
	if c.binDir == "" {
		c.binDir = DefaultBinDir()
	}
	if c.binDir, err = filepath.Abs(c.binDir); err != nil {
		return nil, fmt.Errorf("binaries directory %s: %w", opts.BinDir, err)
	}
	if c.nodes <= 0 {
		c.nodes = defaultNodes
	}
	if err := checkBinaries(c.binDir); err != nil {
		return nil, err
	}
	if err := c.lockDir(); err != nil {
		return nil, err
	}
	if err := c.resetDir(); err != nil {
		c.unlock()
		return nil, err
	}
	realNodeVolumes := ""
	if opts.RealNodes > 0 {
		if err := c.prepareRealNodes(opts.RealNodes); err != nil {
			_ = c.Stop()
			return nil, err
		}
		realNodeVolumes = c.real.paths.volumes()
	}
	if err := writeStages(c.binDir, c.stagesPath(), realNodeVolumes); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// resetDir readies Dir for a fresh cluster: no leftover processes, certificates or etcd data.
func (c *Cluster) resetDir() error {
	// With the lock held, any etcd or kube-apiserver of this directory is left over from a
	// parent that was killed before it could stop them.
	if err := c.killEnvtestProcesses(); err != nil {
		return err
	}
	for _, d := range []string{c.certDir(), c.etcdDir()} {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("clearing %s: %w", d, err)
		}
	}
	if err := os.MkdirAll(c.logDir(), 0o755); err != nil {
		return fmt.Errorf("local cluster state directory %s is not writable: %w", c.Dir, err)
	}
	return nil
}

// lockDir takes an exclusive lock on Dir: a second cluster would otherwise wipe the
// certificates and etcd data of the first one.
func (c *Cluster) lockDir() error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return fmt.Errorf("local cluster state directory %s is not writable: %w", c.Dir, err)
	}
	f, err := os.OpenFile(filepath.Join(c.Dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("local cluster state directory %s is not writable: %w", c.Dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return fmt.Errorf("another local cluster is running in %s", c.Dir)
	}
	c.lock = f
	return nil
}

func (c *Cluster) unlock() {
	if c.lock != nil {
		_ = c.lock.Close()
		c.lock = nil
	}
}

// Stop ends every process of the cluster: SIGTERM first, SIGKILL after a grace period. It
// removes the certificates and etcd data, keeps logs and kubeconfig, and may be called again.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	c.log.Info("stopping local cluster")
	var errs []error
	if c.real != nil {
		if err := c.real.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the real nodes: %w", err))
		}
	}
	// A paused etcd would hold up kube-apiserver's graceful stop, and its own.
	_ = c.ResumeEtcd()
	errs = append(errs, stopChildren(c.controlPlaneChildren())...)
	if c.env != nil {
		if err := c.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping etcd and kube-apiserver: %w", err))
		}
	}
	if err := c.killEnvtestProcesses(); err != nil {
		errs = append(errs, err)
	}
	for _, f := range c.envLogs {
		_ = f.Close()
	}
	for _, d := range []string{c.certDir(), c.etcdDir()} {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	c.unlock()
	return errors.Join(errs...)
}

func (c *Cluster) logDir() string     { return filepath.Join(c.Dir, "logs") }
func (c *Cluster) certDir() string    { return filepath.Join(c.Dir, "certs") }
func (c *Cluster) etcdDir() string    { return filepath.Join(c.Dir, "etcd") }
func (c *Cluster) stagesPath() string { return filepath.Join(c.Dir, "kwok-stages.yaml") }

func (c *Cluster) logPath(name string) string {
	return filepath.Join(c.logDir(), name+".log")
}
