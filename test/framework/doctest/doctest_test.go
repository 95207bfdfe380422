package doctest

import (
	"reflect"
	"testing"
)

const page = "# Page\n\n```console\n$ make demo\n…\nready: export KUBECONFIG=/…/.appkeeper/kubeconfig\n\n$ kubectl get ws\nNAME   READY   AGE\nweb    True    3s\n```\n\n- a list item:\n\n  ```yaml\n  kind: WebServer\n  ```\n"

func TestBlocksAndTranscript(t *testing.T) {
	blocks := Blocks(page)
	if len(blocks) != 2 || blocks[0].Lang != "console" || blocks[0].Line != 3 || blocks[1].Lang != "yaml" || blocks[1].Text != "kind: WebServer" {
		t.Fatalf("blocks: %+v", blocks)
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
