//go:build e2e

// Package install installs appkeeper the way a user does, on a local cluster of its own with no
// operator in it: dist/install.yaml applied server-side, then the operator binary run out of
// process with only the rights of its ServiceAccount, two replicas taking turns through leader
// election.
package install

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// root is the repository, from this package's directory.
const root = "../../.."

var (
	cluster *localcluster.Cluster
	k8s     client.Client // cluster-admin
)

func TestMain(m *testing.M) {
	// No CRDs and no operator: the install brings both.
	os.Exit(testcluster.RunOnBareLocalCluster(m, "appkeeper-e2e-install-", operator.Scheme(), &cluster, &k8s))
}
