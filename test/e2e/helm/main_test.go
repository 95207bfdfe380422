//go:build e2e

// Package helm drives the real helm binary through the chart's whole life on a local cluster that
// starts with neither appkeeper's CRDs nor its operator: install with --create-namespace, upgrade,
// rollback, uninstall, and a reinstall under another release name in another namespace. The
// manager's pods run on simulated nodes, without a container, so the operator runs beside the
// cluster with only the rights the release grants its ServiceAccount.
package helm

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

var (
	cluster *localcluster.Cluster
	k8s     client.Client // cluster-admin
)

func TestMain(m *testing.M) {
	// No CRDs: helm installs them, with the release.
	os.Exit(testcluster.RunOnBareLocalCluster(m, "appkeeper-e2e-helm-", operator.Scheme(), &cluster, &k8s))
}
