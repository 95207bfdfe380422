package docslayout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// page is the map of the repository's folders, from the repository's root.
const page = "docs/development/layout.md"

// roots are the trees the page maps, every folder in them included.
var roots = []string{"api", "charts", "cmd", "config", "docs", "hack", "internal", "test"}

// repoRoot is the repository's root, two folders above this package.
var repoRoot = filepath.Join("..", "..")

// codeSpan is one `code span` of Markdown.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// TestLayoutNamesEveryFolder fails when a folder exists that the page does not name, or when the
// page names a folder that does not exist: a change that adds, moves or removes a folder changes
// the page with it.
func TestLayoutNamesEveryFolder(t *testing.T) {
	markdown, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	named, duplicates := namedFolders(string(markdown))
	for _, dir := range duplicates {
		t.Errorf("%s names %s more than once", page, dir)
	}
	existing := folders(t, repoRoot)
	for _, dir := range existing {
		if !named[dir] {
			t.Errorf("%s exists but %s does not name it: add a row for it", dir, page)
		}
	}
	for dir := range named {
		if !slices.Contains(existing, dir) {
			t.Errorf("%s names %s, which does not exist: remove its row", page, dir)
		}
	}
}

// namedFolders reads the folders the page names: the code spans ending in a slash in the first
// cell of a table row, under one of roots. Patterns such as internal/controller/<kind>/ name no
// folder. duplicates are the folders named in more than one row.
func namedFolders(markdown string) (named map[string]bool, duplicates []string) {
	named = map[string]bool{}
	for _, line := range strings.Split(markdown, "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 3 || cells[0] != "" {
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[1], -1) {
			dir := m[1]
			top, _, _ := strings.Cut(dir, "/")
			if !strings.HasSuffix(dir, "/") || strings.ContainsAny(dir, "<>*") || !slices.Contains(roots, top) {
				continue
			}
			if named[dir] {
				duplicates = append(duplicates, dir)
			}
			named[dir] = true
		}
	}
	return named, duplicates
}

// folders lists, as root/…/name/, every folder of roots that holds a file somewhere below it, but
// for testdata folders and hidden ones. Git keeps no empty folder, so an empty one is left over
// from a checkout and not part of the repository.
func folders(t *testing.T, repo string) []string {
	t.Helper()
	holdsFiles := map[string]bool{}
	for _, root := range roots {
		err := filepath.WalkDir(filepath.Join(repo, root), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			rel, err := filepath.Rel(repo, filepath.Dir(path))
			if err != nil {
				return err
			}
			for dir := filepath.ToSlash(rel); dir != "."; dir = pathDir(dir) {
				holdsFiles[dir+"/"] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	out := make([]string, 0, len(holdsFiles))
	for dir := range holdsFiles {
		out = append(out, dir)
	}
	slices.Sort(out)
	return out
}

// pathDir is the folder holding the slash-separated path p, "." at the top.
func pathDir(p string) string {
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return "."
	}
	return p[:i]
}

// TestNamedFolders holds the page's reading to its rules.
func TestNamedFolders(t *testing.T) {
	markdown := strings.Join([]string{
		"Prose naming `internal/pass/` is not a row.",
		"| folder | what |",
		"| --- | --- |",
		"| `internal/pass/` | the pass, with `internal/rollout/` named in the second cell |",
		"| `hack/installer/`, `hack/syncmanifests/` | two in one cell |",
		"| `internal/controller/<kind>/` | a pattern |",
		"| `bin/` | outside the mapped trees |",
		"| `cmd/appkeeper/main.go` | a file |",
		"| `internal/pass/` | again |",
	}, "\n")
	named, duplicates := namedFolders(markdown)
	want := map[string]bool{"internal/pass/": true, "hack/installer/": true, "hack/syncmanifests/": true}
	if len(named) != len(want) {
		t.Errorf("named %v, want %v", named, want)
	}
	for dir := range want {
		if !named[dir] {
			t.Errorf("%s not read as named", dir)
		}
	}
	if !slices.Equal(duplicates, []string{"internal/pass/"}) {
		t.Errorf("duplicates %v, want [internal/pass/]", duplicates)
	}
}
