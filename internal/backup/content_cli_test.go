package backup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// commandLine runs archive and extract with the flags and environment a Job gives them.
func (env *contentEnv) commandLine(t *testing.T) {
	target := Target{Volume: tempDir(t), Key: "cli/site/1"}
	job := cli{t, map[string]string{EnvEncryptionKey: "cli passphrase"}}
	archive := append(append([]string{CommandArchive, "--dir=" + env.site, "--result="}, target.Args()...),
		PruneArgs([]string{"cli/site/0"})...)
	code, stdout, res := job.run(archive...)
	files, size := siteCounts()
	if code != exitOK || res.Error != "" || res.Artifact != "cli/site/1.content.tar.gz.age" || !res.Encrypted ||
		res.Files != files || res.Bytes != size || !slices.Equal(res.Pruned, []string{"cli/site/0"}) {
		t.Fatalf("archive exited %d with %s", code, stdout)
	}
	if !strings.Contains(stdout, `"files":`) || !strings.Contains(stdout, `"bytes":`) {
		t.Errorf("the result does not name files and bytes: %s", stdout)
	}

	out := tempDir(t)
	extract := append([]string{CommandExtract, "--dir=" + out, "--unless-nonempty", "--result="}, target.Args()...)
	if code, stdout, res := job.run(extract...); code != exitOK || res.Files != files {
		t.Fatalf("extract exited %d with %s", code, stdout)
	}
	requireSameTree(t, readTree(t, out), env.want)
	// The site restarts: its folder holds the restored content, which is left as it is.
	if err := os.WriteFile(filepath.Join(out, "uploads", "new.jpg"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, res := job.run(extract...); code != exitOK || res.Artifact != "" {
		t.Errorf("extract into the restored folder exited %d with %s, want nothing done", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "uploads", "new.jpg")); err != nil {
		t.Errorf("the restarted site's new file is gone: %v", err)
	}

	flipByte(t, filepath.Join(target.Volume, "cli/site/1.content.tar.gz.age"))
	empty := tempDir(t)
	extract[1] = "--dir=" + empty
	code, stdout, res = job.run(extract...)
	if code != exitFailed || res.Verified == nil || *res.Verified || !strings.Contains(res.Error, "is corrupt") {
		t.Errorf("extract of a corrupt archive exited %d with %s", code, stdout)
	}
	requireEmpty(t, empty)
}

// TestContentUsage: the subcommands explain their flags with -h and exit 0, and refuse stray
// arguments.
func TestContentUsage(t *testing.T) {
	for command, flags := range map[string][]string{
		CommandArchive: {FlagDir, FlagPrune, flagCompressLevel, flagKey, flagVolume},
		CommandExtract: {FlagDir, FlagUnlessNonEmpty, flagKey, flagS3Endpoint},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), []string{command, "-h"}, func(string) string { return "" }, &stdout, &stderr); code != exitOK {
			t.Errorf("%s -h exited %d", command, code)
		}
		for _, flag := range flags {
			if !strings.Contains(stderr.String(), "-"+flag) {
				t.Errorf("%s -h does not mention -%s:\n%s", command, flag, stderr.String())
			}
		}
		if code, _, _ := (cli{t, nil}).run(command, "--dir=/tmp", "extra"); code != exitUsage {
			t.Errorf("%s with an extra argument exited %d, want %d", command, code, exitUsage)
		}
	}
	var stderr bytes.Buffer
	Main(context.Background(), nil, func(string) string { return "" }, &bytes.Buffer{}, &stderr)
	if !strings.Contains(stderr.String(), CommandArchive) || !strings.Contains(stderr.String(), CommandExtract) {
		t.Errorf("the usage does not name archive and extract: %s", stderr.String())
	}
}

// TestCopyExactly: a file read while it shrinks or grows still fills exactly the size its
// header gave.
func TestCopyExactly(t *testing.T) {
	for _, tt := range []struct {
		data string
		size int64
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abc", 6, "abc\x00\x00\x00"},
		{"abcdefgh", 6, "abcdef"},
		{"", 0, ""},
	} {
		var out bytes.Buffer
		if err := copyExactly(&out, strings.NewReader(tt.data), tt.size); err != nil || out.String() != tt.want {
			t.Errorf("copyExactly(%q, %d) wrote %q (%v), want %q", tt.data, tt.size, out.String(), err, tt.want)
		}
	}
}
