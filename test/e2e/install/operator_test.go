//go:build e2e

package install

import (
	"path/filepath"
	"testing"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// startOperator runs bin/appkeeper with the given kubeconfig, its log beside the cluster's, and
// waits until its health endpoint answers.
func startOperator(t *testing.T, name, kubeconfig string, args ...string) *testcluster.OperatorProcess {
	t.Helper()
	return testcluster.StartOperator(t, name, kubeconfig, filepath.Join(cluster.Dir, "logs"), args...)
}
