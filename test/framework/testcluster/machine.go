package testcluster

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/appkeeper/appkeeper/internal/localcluster"
)

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

// repoRoot is the repository's root, three folders above this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// FreePort is a loopback TCP port nothing listens on, for a server a test starts.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
