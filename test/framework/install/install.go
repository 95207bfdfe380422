// Package install installs appkeeper on a local cluster as a user does, for the end-to-end tests
// that bring their own operator. It is apart from testcluster so that the tests that do not install
// appkeeper do not link Helm and kustomize.
package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/appkeeper/appkeeper/internal/installer"
	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// ApplyManifest renders configDir (the repository's config/default) as "make build-installer"
// does, writes it to the cluster's directory as install.yaml, applies it server-side with the
// cluster's kubectl and returns its objects.
func ApplyManifest(t *testing.T, cluster *localcluster.Cluster, configDir string) []*unstructured.Unstructured {
	t.Helper()
	data, err := installer.Build(configDir, "ghcr.io/appkeeper/appkeeper:e2e")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cluster.Dir, "install.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	Kubectl(t, cluster, "apply", "--server-side", "-f", path)
	objects, err := installer.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// Kubectl runs the cluster's kubectl as cluster-admin and fails the test with its output.
func Kubectl(t *testing.T, cluster *localcluster.Cluster, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(testcluster.ControlPlaneDir(), "kubectl"), append([]string{"--kubeconfig", cluster.KubeconfigPath}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
