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
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
)

// root is the repository, from this package's directory.
const root = "../../.."

var (
	cluster *localcluster.Cluster
	binDir  string
	k8s     client.Client // cluster-admin
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	binDir = os.Getenv("KUBEBUILDER_ASSETS")
	if binDir == "" {
		binDir = filepath.Join(root, "bin", "controlplane-"+localcluster.KubeVersion)
	}
	dir, err := os.MkdirTemp("", "appkeeper-e2e-install-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	// No CRDs and no operator: the install brings both.
	cluster, err = localcluster.Start(ctx, localcluster.Options{Dir: dir, BinDir: binDir, Nodes: 3})
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
	fmt.Println("cluster state and logs:", dir)
	return m.Run()
}
