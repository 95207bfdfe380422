package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/appkeeper/appkeeper/config/crd"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
)

type localUpOptions struct {
	dir, binDir                                     string
	nodes, realNodes                                int
	noOperator, samples, exitWhenReady, showSamples bool
	realNode, noCRDs                                bool
	operator                                        operator.Options
	// backupImageSet is true when --backup-image was given: it then wins over the real node's.
	backupImageSet bool
}

func runLocal(args []string) int {
	if len(args) > 0 && args[0] == "node" {
		return runNodeFault(args[1:])
	}
	if len(args) == 0 || args[0] != "up" {
		fmt.Fprintln(os.Stderr, "Usage: appkeeper local up [flags]   (appkeeper local up -h lists the flags)")
		fmt.Fprintln(os.Stderr, "       appkeeper local node lose|hang|partition|heal NAME [flags]")
		return 2
	}
	o := localUpOptions{operator: operator.DefaultOptions()}
	fs := flag.NewFlagSet("appkeeper local up", flag.ContinueOnError)
	fs.StringVar(&o.dir, "dir", ".appkeeper", "directory for the kubeconfig, logs and cluster state")
	fs.StringVar(&o.binDir, "bin-dir", localcluster.DefaultBinDir(), "directory of the control-plane binaries built by `make controlplane`")
	fs.IntVar(&o.nodes, "nodes", 3, "number of simulated nodes")
	fs.BoolVar(&o.realNode, "real-node", false, "add a real node (kubelet, containerd, kube-proxy, CoreDNS on this host; root only) where pods run for real; build it with \"make node-deps node images\"")
	fs.IntVar(&o.realNodes, "real-nodes", 0, fmt.Sprintf("add this many real nodes (at most %d), each a kubelet with its own containerd, for a workload spread over nodes; --real-node is --real-nodes=1", localcluster.MaxRealNodes))
	fs.BoolVar(&o.noOperator, "no-operator", false, "do not run the operator in this process")
	fs.BoolVar(&o.noCRDs, "no-crds", false, "install none of appkeeper's CRDs, for an install that brings them (helm install); implies --no-operator")
	fs.BoolVar(&o.samples, "samples", false, "apply config/samples and wait until each is Ready")
	fs.BoolVar(&o.exitWhenReady, "exit-when-ready", false, "stop everything and exit 0 once ready")
	fs.BoolVar(&o.showSamples, "show-samples", false, "print `kubectl get appkeeper` once ready")
	o.operator.BindFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	fs.Visit(func(f *flag.Flag) { o.backupImageSet = o.backupImageSet || f.Name == "backup-image" })
	if o.realNode && o.realNodes == 0 {
		o.realNodes = 1
	}
	o.realNode = o.realNodes > 0
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "appkeeper local up: %v\n", err)
		return 2
	}
	// The operator cannot start without its CRDs: whoever installs them runs it.
	o.noOperator = o.noOperator || o.noCRDs
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localUp(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "appkeeper local up: %v\n", err)
		return 1
	}
	return 0
}

// validate refuses flags that contradict each other.
func (o localUpOptions) validate() error {
	switch {
	case o.nodes < 1:
		return errors.New("--nodes must be at least 1")
	case o.realNodes < 0 || o.realNodes > localcluster.MaxRealNodes:
		return fmt.Errorf("--real-nodes must be between 1 and %d: each real node takes about 135 MiB before its pods", localcluster.MaxRealNodes)
	case o.noCRDs && o.samples:
		return errors.New("--samples needs the CRDs: drop --no-crds, or apply config/samples once they are installed")
	case o.noCRDs && o.showSamples:
		return errors.New("--show-samples needs the CRDs: drop --no-crds")
	}
	return nil
}

func localUp(ctx context.Context, o localUpOptions) (err error) {
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	if !o.noCRDs {
		if crds, err = crd.Definitions(); err != nil {
			return err
		}
	}
	logFile, err := openLog(dir)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// The terminal shows only the ready line; the operator and the test environment log here.
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile)))
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, BinDir: o.binDir, Nodes: o.nodes, CRDs: crds, RealNodes: o.realNodes, Log: ctrl.Log.WithName("local-cluster")})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cluster.Stop()) }()

	// The real node can pull no image: the backup Jobs run the one it packed from this binary,
	// unless --backup-image names another, imported by hand.
	if image := cluster.BackupImage(); image != "" && !o.backupImageSet {
		o.operator.BackupImage = image
	}
	operatorDone := make(chan error, 1)
	if !o.noOperator {
		stopOperator, err := startOperator(ctx, cluster, o.operator, operatorDone)
		if err != nil {
			return err
		}
		defer stopOperator()
	}
	if o.samples {
		if err := applySamples(ctx, cluster.Config, o.realNode); err != nil {
			return err
		}
	}
	if o.samples && o.realNode {
		url, err := wordPressURL(ctx, cluster.Config)
		if err != nil {
			return err
		}
		fmt.Printf("the WordPress sample answers on this host: curl %s\n", url)
	}
	fmt.Printf("ready: export KUBECONFIG=%s\n", cluster.KubeconfigPath)
	if o.showSamples {
		if err := showAppkeeper(ctx, o.binDir, cluster.KubeconfigPath); err != nil {
			return err
		}
	}
	if o.exitWhenReady {
		return nil
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-operatorDone:
		return fmt.Errorf("the operator stopped: %w (log: %s)", err, operatorLog(dir))
	}
}

func operatorLog(dir string) string { return filepath.Join(dir, "logs", "appkeeper.log") }

// openLog creates the operator's log file, and the directories above it.
func openLog(dir string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(operatorLog(dir)), 0o755); err != nil {
		return nil, fmt.Errorf("local cluster state directory %s is not writable: %w", dir, err)
	}
	f, err := os.Create(operatorLog(dir))
	if err != nil {
		return nil, fmt.Errorf("local cluster state directory %s is not writable: %w", dir, err)
	}
	return f, nil
}

// startOperator runs the manager in this process. The returned function stops it and waits until
// it has.
func startOperator(ctx context.Context, cluster *localcluster.Cluster, o operator.Options, done chan<- error) (func(), error) {
	mgr, err := operator.NewManager(cluster.Config, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			done <- err
		}
	}()
	return func() {
		cancel()
		<-stopped
	}, nil
}

func showAppkeeper(ctx context.Context, binDir, kubeconfig string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl"), "--kubeconfig", kubeconfig, "get", "appkeeper", "--all-namespaces")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl get appkeeper: %w", err)
	}
	return nil
}

// sampleTimeout bounds the wait for the samples: on simulated nodes they are Ready in seconds,
// on a real node once MySQL has initialised its data and WordPress has connected to it.
const sampleTimeout = 6 * time.Minute
