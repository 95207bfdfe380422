//go:build e2e

package install

import (
	"path/filepath"
	"testing"

	"github.com/appkeeper/appkeeper/internal/testutil"
)

// startOperator runs bin/appkeeper with the given kubeconfig, its log beside the cluster's, and
// waits until its health endpoint answers.
func startOperator(t *testing.T, name, kubeconfig string, args ...string) *testutil.OperatorProcess {
	t.Helper()
	return testutil.StartOperator(t, name, kubeconfig, filepath.Join(cluster.Dir, "logs"), args...)
}
