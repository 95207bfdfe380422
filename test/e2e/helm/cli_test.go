//go:build e2e

package helm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// helmVersion must match HELM_VERSION in the Makefile, which builds bin/helm-<version>.
const helmVersion = "v4.3.1"

// helmCLI runs bin/helm against the local cluster as a user would, with cache, configuration and
// data directories of its own, so that nothing is written in $HOME.
type helmCLI struct {
	binary string
	env    []string
}

func newHelm(t *testing.T) helmCLI {
	t.Helper()
	binary := testcluster.RepoBinary("helm-" + helmVersion)
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("%v: run make helm", err)
	}
	home := t.TempDir()
	env := append(os.Environ(), "KUBECONFIG="+cluster.KubeconfigPath)
	for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		env = append(env, v+"="+filepath.Join(home, strings.ToLower(strings.TrimPrefix(v, "HELM_"))))
	}
	return helmCLI{binary: binary, env: env}
}

// run runs helm with args and returns its combined output; it logs how long the command took.
func (h helmCLI) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(h.binary, append([]string{"--kubeconfig", cluster.KubeconfigPath}, args...)...)
	cmd.Env = h.env
	began := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("helm %s: %s", strings.Join(args, " "), time.Since(began).Round(time.Millisecond))
	return string(out), err
}

// must runs helm and fails the test, printing helm's output, if it fails.
func (h helmCLI) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.run(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// fails runs helm expecting it to fail, and returns its output.
func (h helmCLI) fails(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.run(t, args...)
	if err == nil {
		t.Fatalf("helm %s succeeded, want an error:\n%s", strings.Join(args, " "), out)
	}
	return out
}
