//go:build real

// Package real runs the scenarios a user runs on the local cluster's real node, where containers
// really start: images, users, ports, probes, volumes, DNS and data are the kubelet's, not a
// simulation. It needs root, and leaves the host as it found it, which TestMain checks.
//
// The MySQL cluster scenarios time faults and failovers, so they run one at a time; the others
// mostly wait for containers, so they call t.Parallel and run side by side once the clusters'
// scenarios are done.
package real

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/appkeeper/appkeeper/config/crd"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

var (
	cluster *localcluster.Cluster
	k8s     client.Client
)

// realNodes is how many real nodes the scenarios run on: an instance's pods spread over them, and
// a drain has a node to move a pod to.
const realNodes = 3

// timeout bounds every wait: real containers start in seconds, but MariaDB's first
// initialisation and WordPress's first page take longer on a small, shared machine.
const timeout = 3 * time.Minute

// The local images that "make images" builds and the real node loads.
const (
	nginxImage     = localcluster.LocalNginxImage
	memcachedImage = localcluster.LocalMemcachedImage
	mariadbImage   = localcluster.LocalMariaDBImage
	wordpressImage = localcluster.LocalWordPressImage
	busyboxImage   = localcluster.LocalBusyboxImage
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// run records the host, runs the suite on a cluster with real nodes, and fails when the stopped
// cluster left anything behind on the host.
func run(m *testing.M) int {
	before, err := localcluster.ReadHostState()
	if err != nil {
		fmt.Println("reading the host's state:", err)
		return 1
	}
	code := runOnCluster(m)
	after, err := localcluster.ReadHostState()
	if err != nil {
		fmt.Println("reading the host's state after the cluster stopped:", err)
		return 1
	}
	if diff := before.Diff(after); len(diff) > 0 {
		fmt.Println("the stopped cluster left the host changed:")
		for _, line := range diff {
			fmt.Println("  " + line)
		}
		return 1
	}
	fmt.Println("the host is as it was before the cluster started")
	return code
}

func runOnCluster(m *testing.M) (code int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	crds, err := crd.Definitions()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	dir, err := os.MkdirTemp("", "appkeeper-real-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	progress := funcr.New(func(_, args string) { fmt.Println("local cluster:", args) }, funcr.Options{})
	began := time.Now()
	// The backup image is packed from the binary "make build" writes beside the control plane, as
	// this test binary holds no backup subcommands.
	appkeeper := filepath.Join(filepath.Dir(localcluster.DefaultBinDir()), "appkeeper")
	cluster, err = localcluster.Start(ctx, localcluster.Options{Dir: dir, Nodes: 1, CRDs: crds, RealNodes: realNodes, AppkeeperBinary: appkeeper, Log: progress})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("cluster with %d real nodes ready in %s\n", realNodes, time.Since(began).Round(time.Millisecond))
	defer func() {
		// The operator stops first, so that it reacts to nothing while the node goes away.
		cancel()
		if err := cluster.Stop(); err != nil {
			fmt.Println("stopping the cluster:", err)
			code = 1
		}
		if code != 0 {
			fmt.Println("cluster state and logs kept:", dir)
			return
		}
		if err := localcluster.RemoveState(dir); err != nil {
			fmt.Println(err)
		}
	}()
	logFile, err := os.Create(filepath.Join(dir, "logs", "appkeeper.log"))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer logFile.Close()
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Writer(logFile))))
	// The operator holds only the RBAC the project ships, as in a cluster installed from
	// dist/install.yaml.
	operatorConfig, err := testenv.AsShippedServiceAccount(ctx, cluster.Config)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	opts := operator.DefaultOptions()
	opts.BackupImage = cluster.BackupImage()
	mgr, err := operator.NewManager(operatorConfig, opts)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Println("operator:", err)
		}
	}()
	k8s, err = client.New(cluster.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return m.Run()
}

// Pod security standards, as the book states them for each kind's pods (docs/install.md).
const (
	restricted = "restricted"
	baseline   = "baseline"
)

// newNamespace creates a namespace for one test that enforces the pod security standard level,
// so that the kubelet runs the operand's pods under it.
func newNamespace(t *testing.T, prefix, level string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: prefix + "-",
		Labels:       map[string]string{"pod-security.kubernetes.io/enforce": level},
	}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	return ns.Name
}
