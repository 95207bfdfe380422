//go:build e2e

// Package install installs appkeeper the way a user does, on a local cluster of its own with no
// operator in it: dist/install.yaml applied server-side, then the operator binary run out of
// process with only the rights of its ServiceAccount, two replicas taking turns through leader
// election.
package install

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

// root is the repository, from this package's directory.
const root = "../../.."

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
	// No CRDs and no operator: the install brings both.
	var err error
	cluster, err = testutil.StartBareLocalCluster(ctx, "appkeeper-e2e-install-")
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
