package kubectlplugin_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/test/framework/await"
)

// result is what a run of the plugin printed and how it exited.
type result struct {
	stdout, stderr string
	code           int
}

// kubectlAppkeeper runs the plugin to its end.
func kubectlAppkeeper(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(plugin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run kubectl appkeeper %s: %v", strings.Join(args, " "), err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// succeeds runs the plugin and fails the test unless it exits 0.
func succeeds(t *testing.T, args ...string) string {
	t.Helper()
	r := kubectlAppkeeper(t, args...)
	if r.code != 0 {
		t.Fatalf("kubectl appkeeper %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// fails runs the plugin and requires the exit code and an error on stderr naming each of want.
func fails(t *testing.T, code int, want []string, args ...string) {
	t.Helper()
	r := kubectlAppkeeper(t, args...)
	if r.code != code {
		t.Fatalf("kubectl appkeeper %s: exit %d, want %d\n%s%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("kubectl appkeeper %s: stderr does not say %q:\n%s", strings.Join(args, " "), w, r.stderr)
		}
	}
}

// following is a run of the plugin in the background, read line by line as it prints.
type following struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr bytes.Buffer
}

func startFollowing(t *testing.T, args ...string) *following {
	t.Helper()
	f := &following{lines: make(chan string, 100)}
	f.cmd = exec.Command(plugin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	f.cmd.Stderr = &f.stderr
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.cmd.Process.Kill(); _ = f.cmd.Wait() })
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			f.lines <- scanner.Text()
		}
		close(f.lines)
	}()
	return f
}

// next is the next line the plugin prints.
func (f *following) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-f.lines:
		if !ok {
			t.Fatalf("the plugin ended; stderr:\n%s", f.stderr.String())
		}
		return line
	case <-time.After(30 * time.Second):
		t.Fatal("the plugin printed nothing for 30s")
	}
	return ""
}

// expect requires the next line.
func (f *following) expect(t *testing.T, want string) {
	t.Helper()
	if got := f.next(t); got != want {
		t.Fatalf("the plugin printed\n  %q\nwant\n  %q", got, want)
	}
}

// requireExit waits for the plugin's end and requires its exit code.
func (f *following) requireExit(t *testing.T, want int) {
	t.Helper()
	for range f.lines {
	}
	_ = f.cmd.Wait()
	if code := f.cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("the plugin exited %d, want %d; stderr:\n%s", code, want, f.stderr.String())
	}
}

func newNamespace(t *testing.T, name string) string {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func create(t *testing.T, objects ...client.Object) {
	t.Helper()
	for _, obj := range objects {
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatalf("create %s: %v", obj.GetName(), err)
		}
	}
}

// setStatus writes an object's status as the operator (or a kubelet, a controller) would.
func setStatus(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Status().Update(context.Background(), obj); err != nil {
		t.Fatalf("status of %s: %v", obj.GetName(), err)
	}
}

// golden compares got with testdata/<name>, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// since is a fixed time for conditions: their lastTransitionTime is required, never printed.
var since = metav1.NewTime(time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC))

func condition(kind string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: kind, Status: status, Reason: reason, Message: message, ObservedGeneration: 1, LastTransitionTime: since}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// waitFor gets obj, named ns/name, once the plugin has created it.
func waitFor(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	await.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	})
}
