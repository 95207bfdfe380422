//go:build e2e

// Package helm drives the real helm binary through the chart's whole life on a local cluster that
// starts with neither appkeeper's CRDs nor its operator: install with --create-namespace, upgrade,
// rollback, uninstall, and a reinstall under another release name in another namespace. The
// manager's pods run on simulated nodes, without a container, so the operator runs beside the
// cluster with only the rights the release grants its ServiceAccount.
package helm

import (
	"context"
	"fmt"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/internal/testutil"
)

var (
	cluster *localcluster.Cluster
	k8s     client.Client // cluster-admin
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	cluster, err = testutil.StartBareLocalCluster(ctx, "appkeeper-e2e-helm-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Println(err)
		}
	}()
	k8s, err = client.New(cluster.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("cluster state and logs:", cluster.Dir)
	return m.Run()
}
