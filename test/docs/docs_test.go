package docs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/appkeeper/appkeeper/test/framework/doctest"
)

// TestDocs checks every page of the book: its example objects are applied in page order in a
// namespace of its own, and the refusals it shows are what the API server answers.
func TestDocs(t *testing.T) {
	paths, err := pages(filepath.Join(apiServer.root, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Log("docs/ holds no page yet: nothing to check")
	}
	for _, path := range paths {
		t.Run(strings.TrimPrefix(path, "docs/"), func(t *testing.T) {
			t.Parallel()
			checkPage(t, path, func(t *testing.T, p problem) {
				t.Errorf("%s:%d: %s", path, p.line, p.message)
			})
		})
	}
}

// checkPage runs the steps of the page at path (from the repository's root) in page order, each
// in a subtest named after its line, and hands each problem to report.
func checkPage(t *testing.T, path string, report func(*testing.T, problem)) {
	raw, err := os.ReadFile(filepath.Join(apiServer.root, path))
	if err != nil {
		t.Fatal(err)
	}
	blocks, unclosed := doctest.Blocks(string(raw))
	if unclosed > 0 {
		report(t, problem{unclosed, "this fence is never closed, so the rest of the page is one code " +
			"block: close it with a line of backticks"})
	}
	run := newPageRun(t, path)
	for _, s := range planSteps(blocks) {
		t.Run(s.name(), func(t *testing.T) {
			for _, p := range run.check(t.Context(), s) {
				report(t, p)
			}
		})
	}
}

// newPageRun makes the page's namespace and a kubeconfig whose current context uses it, so that
// the page's commands and objects, which name no namespace, land there.
func newPageRun(t *testing.T, path string) *pageRun {
	t.Helper()
	p := &pageRun{namespace: namespaceOf(path)}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.namespace}}
	if err := apiServer.client.Create(t.Context(), ns); err != nil {
		t.Fatalf("create namespace %s: %v", p.namespace, err)
	}
	config, err := clientcmd.Load(apiServer.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	config.Contexts[config.CurrentContext].Namespace = p.namespace
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*config, kubeconfig); err != nil {
		t.Fatal(err)
	}
	p.env = environment(kubeconfig)
	return p
}

var notInLabel = regexp.MustCompile(`[^a-z0-9]+`)

// namespaceOf is the namespace of the page at path: the path as a DNS label, docs/kinds/webserver.md
// as docs-kinds-webserver, cut and told apart by a hash when it is too long for one.
func namespaceOf(path string) string {
	name := strings.Trim(notInLabel.ReplaceAllString(strings.ToLower(strings.TrimSuffix(path, ".md")), "-"), "-")
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(path))
	return strings.TrimRight(name[:54], "-") + "-" + hex.EncodeToString(sum[:])[:8]
}
