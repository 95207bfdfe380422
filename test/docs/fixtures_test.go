package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/appkeeper/appkeeper/test/framework/doctest"
)

// fixture is a page of testdata/, by its path from the repository's root.
func fixture(t *testing.T, name string) (path, markdown string) {
	t.Helper()
	path = filepath.ToSlash(filepath.Join("test", "docs", "testdata", name))
	raw, err := os.ReadFile(filepath.Join(apiServer.root, path))
	if err != nil {
		t.Fatal(err)
	}
	return path, string(raw)
}

// problems runs the page at path as TestDocs does and returns its problems instead of failing.
func problems(t *testing.T, path string) []problem {
	t.Helper()
	var found []problem
	t.Run("page", func(t *testing.T) {
		checkPage(t, path, func(_ *testing.T, p problem) { found = append(found, p) })
	})
	return found
}

func TestIsRefusal(t *testing.T) {
	for output, want := range map[string]bool{
		"The WebServer \"x\" is invalid: spec.image: …":       true,
		"The WebServer \"x\" is\n  invalid: spec.image: …":    true, // wrapped by the page
		"\nError from server (Forbidden): …":                  true,
		"The operator reconciles it.":                         false,
		"webserver.apps.appkeeper.dev/web serverside-applied": false,
		"error: mysql/db exists":                              false,
		"NAME   DESIRED\nweb    3":                            false,
		"":                                                    false,
	} {
		if got := isRefusal(output); got != want {
			t.Errorf("isRefusal(%q) = %v, want %v", output, got, want)
		}
	}
}

func TestPlanSteps(t *testing.T) {
	_, markdown := fixture(t, "accepted.md")
	blocks, _ := doctest.Blocks(markdown)
	var got []string
	for _, s := range planSteps(blocks) {
		line := fmt.Sprintf("%s kind=%d docs=%d", s.name(), s.kind, len(s.docs))
		if s.refusal != nil {
			line += fmt.Sprintf(" refused-at=%d", s.refusal.line)
		}
		got = append(got, line)
	}
	want := []string{
		"line 5 yaml kind=0 docs=1",
		"line 17 yaml kind=0 docs=1",
		"line 29 yaml kind=0 docs=2",
		"line 50 command kind=2 docs=0",
		"line 56 yaml kind=0 docs=1 refused-at=63",
		"line 71 command kind=2 docs=0",
		"line 74 command kind=2 docs=0",
		"line 93 command kind=2 docs=0",
		"line 99 yaml kind=1 docs=1",
		"line 108 yaml kind=0 docs=1",
		"line 114 yaml kind=0 docs=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSplitDocuments(t *testing.T) {
	docs := splitDocuments("# only a comment\n---\na: 1\n--- # next\nkind: X\napiVersion: v1\nmetadata: {namespace: shop}\n---\nb: [\n", 3)
	if len(docs) != 3 {
		t.Fatalf("documents: %+v", docs)
	}
	if docs[0].line != 5 || docs[0].object() {
		t.Errorf("first document: %+v", docs[0])
	}
	if docs[1].line != 7 || !docs[1].object() || docs[1].namespace != "shop" {
		t.Errorf("second document: %+v", docs[1])
	}
	if docs[2].err == nil || !strings.Contains(docs[2].err.Error(), "of the page") {
		t.Errorf("third document's error names no line of the page: %v", docs[2].err)
	}
	if docs := splitDocuments("a: 1\na: 2\n", 1); len(docs) != 1 || docs[0].err == nil {
		t.Errorf("a duplicate key is not an error: %+v", docs)
	}
}

func TestNamespaceOf(t *testing.T) {
	for path, want := range map[string]string{
		"docs/kinds/webserver.md":                               "docs-kinds-webserver",
		"docs/runbooks/AppkeeperBackupTooOld.md":                "docs-runbooks-appkeeperbackuptooold",
		"docs/Upgrades & rollbacks.md":                          "docs-upgrades-rollbacks",
		"docs/" + strings.Repeat("very-long-name/", 5) + "x.md": "docs-very-long-name-very-long-name-very-long-name-very-e4213bff",
	} {
		if got := namespaceOf(path); got != want || len(got) > 63 {
			t.Errorf("namespaceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestAcceptedFixture runs a page whose every example holds: none may be reported.
func TestAcceptedFixture(t *testing.T) {
	path, _ := fixture(t, "accepted.md")
	for _, p := range problems(t, path) {
		t.Errorf("%s:%d: %s", path, p.line, p.message)
	}
}

// TestWrongFixture runs a page whose examples are wrong in every way the test knows: each must be
// reported, at its line, and nothing else.
func TestWrongFixture(t *testing.T) {
	path, _ := fixture(t, "wrong.md")
	want := map[int][]string{
		5:  {"refused this example, but not as the block at line 12 shows", `the page has "metadata.name: Invalid value: \"web.site\"`, `kubectl printed "<nil>: Invalid value:`},
		18: {"the page shows the API server refusing this example (the block at line 25)", "but it accepted it", "webserver.apps.appkeeper.dev/web serverside-applied"},
		31: {"the API server refused this example", "must be a DNS-1035 label of at most 52 characters", "right after this one"},
		40: {"no example on the page produces it"},
		48: {"does not print what the page shows", `Invalid value: "nginx 1.23"`, `the page has "\"string\": spec.image`},
		50: {"prints what the page shows, but succeeds"},
		52: {`Error from server (NotFound): webservers.apps.appkeeper.dev "blog" not found`, "holds only what this page's ```yaml blocks above applied"},
		59: {"does not parse", "line 61 of the page"},
		65: {"does not serve kind WebSever of apiVersion apps.appkeeper.dev/v1alpha1", "parsedOnly"},
		77: {"this document has no apiVersion and kind"},
		83: {"never closed"},
	}
	got := map[int]string{}
	for _, p := range problems(t, path) {
		t.Logf("%s:%d: %s", path, p.line, p.message)
		got[p.line] += p.message + "\n"
	}
	for line, message := range got {
		parts, ok := want[line]
		if !ok {
			t.Errorf("%s:%d: reported, but nothing is wrong there:\n%s", path, line, message)
		}
		for _, part := range parts {
			if !strings.Contains(message, part) {
				t.Errorf("%s:%d: the report does not say %q:\n%s", path, line, part, message)
			}
		}
	}
	for line := range want {
		if _, ok := got[line]; !ok {
			t.Errorf("%s:%d: not reported", path, line)
		}
	}
}

func TestPages(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.md", "notes.txt", "kinds/b.md", "reference/api.md", "reference/c.md"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := pages(dir)
	if err != nil {
		t.Fatal(err)
	}
	// pages names them from the repository's root, which the temporary folder is outside of.
	prefix, err := filepath.Rel(apiServer.root, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range found {
		names = append(names, strings.TrimPrefix(path, filepath.ToSlash(prefix)+"/"))
	}
	if want := []string{"a.md", "kinds/b.md", "reference/c.md"}; !slices.Equal(names, want) {
		t.Errorf("pages: %v, want %v", names, want)
	}
	// Before the book's first page, there is no docs/ to walk: no page, and no error.
	if found, err := pages(filepath.Join(dir, "docs")); err != nil || len(found) != 0 {
		t.Errorf("pages of a missing folder: %v, %v", found, err)
	}
}
