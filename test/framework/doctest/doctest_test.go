package doctest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const page = "# Page\n\n```console\n$ make demo\n…\nready: export KUBECONFIG=/…/.appkeeper/kubeconfig\n\n$ kubectl get ws\nNAME   READY   AGE\nweb    True    3s\n```\n\n- a list item:\n\n  ```yaml\n  kind: WebServer\n  ```\n"

func TestBlocksAndTranscript(t *testing.T) {
	blocks, unclosed := Blocks(page)
	if unclosed != 0 || len(blocks) != 2 || blocks[0].Lang != "console" || blocks[0].Line != 3 || blocks[1].Lang != "yaml" || blocks[1].Text != "kind: WebServer\n" {
		t.Fatalf("blocks: %+v, unclosed %d", blocks, unclosed)
	}
	got := Transcript(blocks[0])
	want := []Command{
		{Line: 4, Command: "make demo", Output: []string{"…", "ready: export KUBECONFIG=/…/.appkeeper/kubeconfig"}},
		{Line: 8, Command: "kubectl get ws", Output: []string{"NAME   READY   AGE", "web    True    3s"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("transcript:\n%+v\nwant\n%+v", got, want)
	}
}

func TestBlocks(t *testing.T) {
	// Lines end in CRLF, as an editor on Windows saves a page; the numbers are the page's lines.
	markdown := strings.Join([]string{
		"# A page",                       // 1
		"",                               // 2
		"```YAML",                        // 3
		"a: 1",                           // 4
		"```",                            // 5
		"",                               // 6
		"```console",                     // 7
		"$ kubectl get x",                // 8
		"```",                            // 9
		"Text between.",                  // 10
		"",                               // 11
		"```text extra words",            // 12
		"x",                              // 13
		"```",                            // 14
		"",                               // 15
		"1. In a list item:",             // 16
		"",                               // 17
		"   ```console",                  // 18
		"   $ kubectl apply -f - <<EOF",  // 19
		"   metadata:",                   // 20
		"     name: jobs",                // 21
		"   EOF",                         // 22
		"  indented less than the fence", // 23
		"   ```",                         // 24
		"",                               // 25
		"```",                            // 26
		"bare",                           // 27
		"```",                            // 28
	}, "\r\n")
	blocks, unclosed := Blocks(markdown)
	if unclosed != 0 {
		t.Fatalf("unclosed fence at line %d", unclosed)
	}
	var got []string
	for _, b := range blocks {
		got = append(got, fmt.Sprintf("%d %q adjoins=%v %q", b.Line, b.Lang, b.Adjoins, b.Text))
	}
	want := []string{
		`3 "yaml" adjoins=false "a: 1\n"`,
		`7 "console" adjoins=true "$ kubectl get x\n"`,
		`12 "text" adjoins=false "x\n"`,
		// The list item's block loses the item's indentation, and the here-document keeps its own.
		`18 "console" adjoins=false "$ kubectl apply -f - <<EOF\nmetadata:\n  name: jobs\nEOF\nindented less than the fence\n"`,
		`26 "" adjoins=true "bare\n"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	blocks, unclosed = Blocks("# x\n\n```yaml\na: 1\n```\n\n  ```console\n$ true\n")
	if unclosed != 7 || len(blocks) != 1 {
		t.Errorf("an unclosed fence at line 7 is reported at line %d, after %+v", unclosed, blocks)
	}
	if blocks, _ := Blocks("Inline ```code``` is no fence.\n```` yaml extra\nk: v\n```\n````\n"); len(blocks) != 1 ||
		blocks[0].Lang != "yaml" || blocks[0].Text != "k: v\n```\n" {
		t.Errorf("a four-backtick fence holding ``` reads as %+v", blocks)
	}
}

func TestTranscript(t *testing.T) {
	text := "# a comment before any command\n" +
		"$ kubectl get ws\n" +
		"NAME   DESIRED\n" +
		"web    3\n" +
		"\n" +
		"$ kubectl apply --server-side \\\n" +
		"    -f - <<< '{}'\n" +
		"The X \"y\" is invalid:\n" +
		"  wrapped\n" +
		"$ cat <<-'EOF' | kubectl apply -f -\n" +
		"\tkind: X\n" +
		"\tEOF\n" +
		"Error from server (NotFound): x\n" +
		"$ kubectl get x <<< \"$(echo a)\"\n"
	got := Transcript(Block{Line: 9, Lang: "console", Text: text})
	want := []Command{
		{Line: 11, Command: "kubectl get ws", Output: []string{"NAME   DESIRED", "web    3"}},
		{Line: 15, Command: "kubectl apply --server-side \\\n    -f - <<< '{}'", Output: []string{"The X \"y\" is invalid:", "  wrapped"}},
		{Line: 19, Command: "cat <<-'EOF' | kubectl apply -f -\n\tkind: X\n\tEOF", Output: []string{"Error from server (NotFound): x"}},
		{Line: 23, Command: "kubectl get x <<< \"$(echo a)\""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("commands:\n%#v\nwant:\n%#v", got, want)
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		name    string
		shown   []string
		printed string
		ok      bool
	}{
		{"columns aligned otherwise, another age", []string{"NAME   READY   AGE", "web    True    3s"}, "NAME  READY  AGE\nweb   True   2m10s\n", true},
		{"a word differs", []string{"web True 3s"}, "web False 3s", false},
		{"a line too many", []string{"web True 3s"}, "web True 3s\nshop True 3s", false},
		{"a line missing", []string{"web True 3s", "shop True 3s"}, "web True 3s", false},
		{"any lines, then a line with … inside", []string{"…", "ready: export KUBECONFIG=/…/.appkeeper/kubeconfig"}, "go build\nbuild.sh\nready: export KUBECONFIG=/tmp/x/.appkeeper/kubeconfig", true},
		{"any lines may be none", []string{"…", "done"}, "done", true},
		{"a placeholder is one word", []string{"password: <password>"}, "password: s3cr3t!", true},
		{"a placeholder is not two words", []string{"password: <password>"}, "password: two words", false},
		{"nothing shown, nothing printed", nil, "", true},
		{"nothing shown, something printed", nil, "surprise", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := Match(c.shown, c.printed); (err == nil) != c.ok {
				t.Errorf("Match(%q, %q) = %v, want ok %v", c.shown, c.printed, err, c.ok)
			}
		})
	}
}
