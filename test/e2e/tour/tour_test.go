//go:build e2e

// Package tour runs the getting-started page of the book as a reader does: make demo's cluster
// started by the command the Makefile gives it, then every command of the page in order, each
// printing what the page shows.
package tour

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/test/framework/doctest"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// commandTimeout bounds one command of the page; the page's own waits are shorter.
const commandTimeout = 6 * time.Minute

func TestGettingStartedTour(t *testing.T) {
	commands := transcripts(t, "docs/getting-started.md")
	if len(commands) == 0 || commands[0].Command != "make demo" {
		t.Fatal("docs/getting-started.md must start its transcripts with `$ make demo`")
	}
	reader := newReaderFolder(t)
	startDemo(t, reader, commands[0])

	var exports []string
	for _, c := range commands[1:] {
		if strings.HasPrefix(c.Command, "export ") {
			exports = append(exports, c.Command)
			continue
		}
		printed, err := runAsReader(reader, exports, c.Command)
		if err != nil {
			t.Fatalf("docs/getting-started.md:%d: $ %s: %v\n%s", c.Line, c.Command, err, printed)
		}
		if err := doctest.Match(c.Output, printed); err != nil {
			t.Fatalf("docs/getting-started.md:%d: $ %s: %v", c.Line, c.Command, err)
		}
	}
}

// newReaderFolder is a folder laid out like a checkout, where the page's relative paths (bin/,
// config/samples/, .appkeeper/) resolve, with a cluster directory of its own.
func newReaderFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bin", "config"} {
		if err := os.Symlink(filepath.Join(abs, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startDemo runs make demo's last command, the cluster itself, in the reader's folder; the build
// steps before it are make's own. It returns once the output matches the page's.
func startDemo(t *testing.T, reader string, demo doctest.Command) {
	t.Helper()
	args := demoCommand(t)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = reader
	out := &testservers.Output{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil && !strings.Contains(err.Error(), "interrupt") {
				t.Errorf("make demo's cluster ended badly after Ctrl-C: %v", err)
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Errorf("make demo's cluster did not stop within a minute of Ctrl-C")
		}
	})
	deadline := time.After(commandTimeout)
	for {
		if err := doctest.Match(demo.Output, out.String()); err == nil {
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("docs/getting-started.md:%d: make demo exited (%v) before printing what the page shows:\n%s", demo.Line, err, out.String())
		case <-deadline:
			t.Fatalf("docs/getting-started.md:%d: make demo: %v", demo.Line, doctest.Match(demo.Output, out.String()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// demoCommand is the recipe's last line of the Makefile's demo target, $(BIN) resolved.
func demoCommand(t *testing.T) []string {
	t.Helper()
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var recipe []string
	scanner := bufio.NewScanner(bytes.NewReader(makefile))
	inDemo := false
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case strings.HasPrefix(line, "demo:"):
			inDemo = true
		case inDemo && strings.HasPrefix(line, "\t"):
			recipe = strings.Fields(line)
		case inDemo:
			inDemo = false
		}
	}
	if len(recipe) == 0 || recipe[0] != "$(BIN)/appkeeper" {
		t.Fatalf("the Makefile's demo target no longer ends in $(BIN)/appkeeper …: %q", recipe)
	}
	recipe[0] = "bin/appkeeper"
	return recipe
}

// runAsReader runs one command of the page in a shell of its own that has run the page's exports.
func runAsReader(dir string, exports []string, command string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	script := strings.Join(append(append([]string{}, exports...), command), "\n")
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PWD="+dir)
	printed, err := cmd.CombinedOutput()
	if err != nil {
		return string(printed), fmt.Errorf("failed: %w", err)
	}
	return string(printed), nil
}
