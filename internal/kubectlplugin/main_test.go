package kubectlplugin_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/appkeeper/appkeeper/internal/operator"
)

// The plugin is tested as a user runs it: the built binary, pointed at a real kube-apiserver
// with appkeeper's CRDs by --kubeconfig. No operator runs: each test writes the statuses the
// operator would, so that every state the plugin describes is known exactly.
var (
	k8s        client.Client
	kubeconfig string
	plugin     string
	update     = flag.Bool("update", false, "rewrite the golden files with the plugin's output")
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		return 1
	}
	dir, err := os.MkdirTemp("", "kubectl-appkeeper-test-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(dir)
	plugin = filepath.Join(dir, "kubectl-appkeeper")
	build := exec.Command("go", "build", "-o", plugin, "./cmd/kubectl-appkeeper")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Printf("build the plugin: %v\n%s", err, out)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(repoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		fmt.Println("start envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		fmt.Println(err)
		return 1
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: operator.Scheme()}); err != nil {
		fmt.Println(err)
		return 1
	}
	return m.Run()
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
