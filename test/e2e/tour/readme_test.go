package tour

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/appkeeper/appkeeper/test/framework/doctest"
)

// root is the repository, from this package's directory.
const root = "../../.."

// transcripts are the commands of a page's console blocks, in order.
func transcripts(t *testing.T, file string) []doctest.Command {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	blocks, unclosed := doctest.Blocks(string(page))
	if unclosed > 0 {
		t.Fatalf("%s:%d: a code fence is never closed", file, unclosed)
	}
	var commands []doctest.Command
	for _, b := range blocks {
		if b.Lang == "console" {
			commands = append(commands, doctest.Transcript(b)...)
		}
	}
	return commands
}

// The README shows a part of the tour; the tour's end-to-end test runs the page, so each command
// the README shows must be on the page, printing the same.
func TestReadmeShowsOnlyWhatTheTourRuns(t *testing.T) {
	tour := map[string][]string{}
	for _, c := range transcripts(t, "docs/getting-started.md") {
		tour[c.Command] = c.Output
	}
	shown := transcripts(t, "README.md")
	if len(shown) == 0 {
		t.Fatal("README.md shows no console transcript of the tour")
	}
	for _, c := range shown {
		output, ok := tour[c.Command]
		switch {
		case !ok:
			t.Errorf("README.md:%d: $ %s is not a command of docs/getting-started.md, whose tour a test runs", c.Line, c.Command)
		case !reflect.DeepEqual(output, c.Output):
			t.Errorf("README.md:%d: $ %s shows\n%q\nbut docs/getting-started.md shows\n%q", c.Line, c.Command, c.Output, output)
		}
	}
}
