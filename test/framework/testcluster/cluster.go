package testcluster

import (
	"context"
	"fmt"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/config/crd"
	"github.com/appkeeper/appkeeper/internal/localcluster"
)

// StartLocalCluster starts a local cluster of three simulated nodes that serves appkeeper's CRDs,
// its state in a new temporary directory named after prefix: the cluster the end-to-end and fault
// suites run on.
func StartLocalCluster(ctx context.Context, prefix string) (*localcluster.Cluster, error) {
	crds, err := crd.Definitions()
	if err != nil {
		return nil, err
	}
	return startLocalCluster(ctx, prefix, crds)
}

// RunOnBareLocalCluster runs a package's tests on a local cluster of its own that serves none of
// appkeeper's CRDs and runs no operator: the cluster a test installs appkeeper on as a user would,
// with dist/install.yaml or the Helm chart. Before the tests run, cluster is set to it and admin to
// a cluster-admin client of it that knows scheme's types; the cluster is stopped after them. It returns the exit code for
// os.Exit.
func RunOnBareLocalCluster(m *testing.M, prefix string, scheme *runtime.Scheme, cluster **localcluster.Cluster, admin *client.Client) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := startLocalCluster(ctx, prefix, nil)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	code := 1
	defer func() { Stop(c, code) }()
	*cluster = c
	if *admin, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("cluster state and logs:", c.Dir)
	code = m.Run()
	return code
}

// Stop stops the local cluster c after tests that ended with code. Their state directory goes
// when they passed; after a failure it stays, with the logs a reader needs, and its path is
// printed again.
func Stop(c *localcluster.Cluster, code int) {
	// A process that outlived its grace period was killed: the error says so, and nothing of the
	// cluster runs on.
	if err := c.Stop(); err != nil {
		fmt.Println(err)
	}
	if code != 0 {
		fmt.Println("cluster state and logs kept:", c.Dir)
		return
	}
	if err := localcluster.RemoveState(c.Dir); err != nil {
		fmt.Println(err)
	}
}

func startLocalCluster(ctx context.Context, prefix string, crds []*apiextensionsv1.CustomResourceDefinition) (*localcluster.Cluster, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	return localcluster.Start(ctx, localcluster.Options{Dir: dir, BinDir: ControlPlaneDir(), Nodes: 3, CRDs: crds})
}
