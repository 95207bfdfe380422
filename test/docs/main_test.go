// Package docs_test runs every example of the book under docs/ against a real API server with
// appkeeper's CRDs, so that a page cannot drift from the code: its objects are applied as a
// reader would apply them, and the refusals it shows must be what the API server answers. No
// operator runs: admission (schema, defaults, CEL rules) is where appkeeper refuses bad input.
package docs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/appkeeper/appkeeper/test/framework/doctest"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// apiServer is the control plane the pages run against, started by TestMain.
var apiServer struct {
	kubeconfig   []byte // a system:masters user's, as an operator's admin has
	client       client.Client
	mapper       meta.RESTMapper
	controlPlane string // its binaries' folder, kubectl's too
	kubectl      string
	root         string // the repository: commands run there, as the README's do
	cacheDir     string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		return 1
	}
	root := repoRoot()
	crds, err := monitoringCRDs(filepath.Join(root, "docs"), filepath.Join(root, "test", "docs", "testdata"))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		CRDs:                  crds,
	}
	if _, err := env.Start(); err != nil {
		// A start that fails after the API server came up (a CRD refused, say) leaves it running.
		_ = env.Stop()
		fmt.Println("start envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if err := connect(env); err != nil {
		fmt.Println(err)
		return 1
	}
	if apiServer.cacheDir, err = os.MkdirTemp("", "appkeeper-docs-kubectl-cache-"); err != nil {
		fmt.Println(err)
		return 1
	}
	defer func() { _ = os.RemoveAll(apiServer.cacheDir) }()
	apiServer.root = root
	apiServer.controlPlane = testcluster.ControlPlaneDir()
	apiServer.kubectl = filepath.Join(apiServer.controlPlane, "kubectl")
	if _, err := os.Stat(apiServer.kubectl); err != nil {
		fmt.Println("the pages' commands run the control plane's kubectl:", err)
		return 1
	}
	return m.Run()
}

// connect adds the admin user whose kubeconfig every page's is made from, and the test's client.
func connect(env *envtest.Environment) error {
	admin, err := env.AddUser(envtest.User{Name: "docs-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add the admin user: %w", err)
	}
	if apiServer.kubeconfig, err = admin.KubeConfig(); err != nil {
		return err
	}
	if apiServer.client, err = client.New(admin.Config(), client.Options{}); err != nil {
		return err
	}
	apiServer.mapper = apiServer.client.RESTMapper()
	return nil
}

// repoRoot is the repository's root, two folders above this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// pages lists the Markdown pages under dir, by their paths from the repository's root.
// reference/api.md is generated from the Go types and shows no example.
func pages(dir string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(path string, entry fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == dir {
			return fs.SkipDir
		}
		if err != nil || entry.IsDir() || filepath.Ext(path) != ".md" {
			return err
		}
		if rel, _ := filepath.Rel(dir, path); filepath.ToSlash(rel) == "reference/api.md" {
			return nil
		}
		rel, err := filepath.Rel(repoRoot(), path)
		found = append(found, filepath.ToSlash(rel))
		return err
	})
	return found, err
}

// monitoringCRDs are prometheus-operator's CRDs of the kinds the pages under dirs show, as
// prometheus-operator releases them: appkeeper's monitoring pages show its ServiceMonitors,
// PodMonitors and PrometheusRules, which only an API server with those CRDs judges. A page
// that cannot be read is left to the test to report.
func monitoringCRDs(dirs ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var kinds []string
	for _, dir := range dirs {
		paths, err := pages(dir)
		if err != nil {
			return nil, err
		}
		for _, path := range paths {
			raw, _ := os.ReadFile(filepath.Join(repoRoot(), path))
			blocks, _ := doctest.Blocks(string(raw))
			for _, s := range planSteps(blocks) {
				for _, d := range s.docs {
					if gvk := schema.FromAPIVersionAndKind(d.apiVersion, d.kind); gvk.Group == "monitoring.coreos.com" && d.kind != "" {
						kinds = append(kinds, d.kind)
					}
				}
			}
		}
	}
	slices.Sort(kinds)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, kind := range slices.Compact(kinds) {
		plural := strings.ToLower(kind) + "s"
		if strings.HasSuffix(kind, "s") {
			plural = strings.ToLower(kind) + "es" // Prometheus: prometheuses
		}
		crd, err := testcluster.PrometheusOperatorCRD(plural)
		if err != nil {
			return nil, fmt.Errorf("prometheus-operator's CRD of %s, which a page shows: %w", kind, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
