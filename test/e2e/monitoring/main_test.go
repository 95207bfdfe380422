//go:build e2e

// Package monitoring runs appkeeper's alerts in a real Prometheus: the operator, installed with
// dist/install.yaml's RBAC and run out of process as its ServiceAccount, is scraped over HTTPS
// with the token of a ServiceAccount bound to appkeeper-metrics-reader, and the chart's
// PrometheusRule is evaluated against what it serves.
package monitoring

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
	// No CRDs and no operator: the install brings the CRDs, the test runs the operator.
	os.Exit(testcluster.RunOnBareLocalCluster(m, "appkeeper-e2e-monitoring-", operator.Scheme(), &cluster, &k8s))
}
