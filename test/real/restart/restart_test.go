//go:build real

// Package restart checks that real nodes killed without a chance to clean up leave nothing
// behind once the next local cluster has started and stopped.
package restart

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

func TestKilledRealNodeIsCleanedUpByTheNextStart(t *testing.T) {
	appkeeper := filepath.Join(filepath.Dir(localcluster.DefaultBinDir()), "appkeeper")
	if _, err := os.Stat(appkeeper); err != nil {
		t.Fatalf("%s: run \"make build\" first", appkeeper)
	}
	before := testcluster.HostState(t)
	dir := t.TempDir()
	// A bound against a hang, not a measure: two clusters start on a machine that may be running
	// other suites beside this one.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()

	first := exec.CommandContext(ctx, appkeeper, "local", "up", "--real-nodes=2", "--nodes=1", "--no-operator", "--dir", dir)
	out, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	first.Stderr = os.Stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, out)
	kubectl := filepath.Join(localcluster.DefaultBinDir(), "kubectl")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", filepath.Join(dir, "kubeconfig")}, args...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	// A running container leaves a shim, a network namespace, mounts and cgroups behind: one on
	// each node.
	for i, node := range []string{localcluster.RealNodeName, localcluster.RealNodeName + "-2"} {
		name := fmt.Sprintf("sleeper-%d", i)
		run("run", name, "--image="+localcluster.LocalBusyboxImage, "--restart=Never",
			`--overrides={"spec":{"nodeName":"`+node+`"}}`, "--command", "--", "sleep", "3600")
		run("wait", "--for=condition=Ready", "pod/"+name, "--timeout=2m")
	}

	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if diff := before.Diff(testcluster.HostState(t)); len(diff) == 0 {
		t.Fatal("the killed cluster changed nothing on the host: the test proves nothing")
	}

	// In a directory of its own, so that nothing but the repair can undo the killed nodes' mounts.
	second := exec.CommandContext(ctx, appkeeper, "local", "up", "--real-nodes=2", "--nodes=1", "--no-operator", "--exit-when-ready", "--dir", t.TempDir())
	if b, err := second.CombinedOutput(); err != nil {
		t.Fatalf("local up after a killed one: %v\n%s", err, b)
	}
	if diff := before.Diff(testcluster.HostState(t)); len(diff) > 0 {
		t.Errorf("left on the host after a killed cluster and a clean one:\n%s", strings.Join(diff, "\n"))
	}
}

func waitReady(t *testing.T, out interface{ Read([]byte) (int, error) }) {
	t.Helper()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "ready:") {
			go func() {
				for sc.Scan() {
				}
			}()
			return
		}
	}
	t.Fatal("local up exited before it was ready")
}
