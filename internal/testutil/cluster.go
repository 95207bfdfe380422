package testutil

import (
	"context"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

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

// StartBareLocalCluster is StartLocalCluster without appkeeper's CRDs: the cluster a test
// installs appkeeper on as a user would, with dist/install.yaml or the Helm chart.
func StartBareLocalCluster(ctx context.Context, prefix string) (*localcluster.Cluster, error) {
	return startLocalCluster(ctx, prefix, nil)
}

func startLocalCluster(ctx context.Context, prefix string, crds []*apiextensionsv1.CustomResourceDefinition) (*localcluster.Cluster, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	return localcluster.Start(ctx, localcluster.Options{Dir: dir, BinDir: ControlPlaneDir(), Nodes: 3, CRDs: crds})
}

// ControlPlaneDir holds the control plane's binaries and kubectl: $KUBEBUILDER_ASSETS when set, as
// make exports it, else the repository's bin/controlplane-<version>, so that go test runs alone.
func ControlPlaneDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return filepath.Join(repoRoot(), "bin", "controlplane-"+localcluster.KubeVersion)
}

// RepoBinary is the named file of the repository's bin/, where make builds appkeeper and the tools.
func RepoBinary(name string) string {
	return filepath.Join(repoRoot(), "bin", name)
}
