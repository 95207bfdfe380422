package testutil

import (
	"context"
	"os"

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
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	return localcluster.Start(ctx, localcluster.Options{Dir: dir, Nodes: 3, CRDs: crds})
}
