package testcluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// RequireBuilt returns the absolute path of a binary make builds into the repository's bin/
// (relative names it from the root). When it is missing the test is skipped, unless
// APPKEEPER_REQUIRE_MARIADB says the machine must have every test server and tool (as `make test`
// does) or strict asks for it: then the test fails, naming the make target that builds it.
func RequireBuilt(t testing.TB, relative, makeTarget string, strict bool) string {
	t.Helper()
	binary := filepath.Join(repoRoot(), relative)
	if _, err := os.Stat(binary); err != nil {
		if strict || os.Getenv("APPKEEPER_REQUIRE_MARIADB") != "" {
			t.Fatalf("%s is not built: run `make %s`", binary, makeTarget)
		}
		t.Skipf("%s is not built; `make %s` builds it", binary, makeTarget)
	}
	return binary
}

// StartPrometheus starts the Prometheus "make prometheus" builds, its files in a temporary
// directory, and stops it when the test ends. It fails the test when Prometheus is not built.
func StartPrometheus(t testing.TB, o testservers.PrometheusOptions) *testservers.PrometheusServer {
	t.Helper()
	o.Binary = RequireBuilt(t, testservers.Prometheus, "prometheus", true)
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	s, err := testservers.StartPrometheus(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	t.Logf("prometheus at %s, its log %s", s.URL, s.LogPath)
	return s
}

// Promtool runs the promtool "make prometheus" builds with args and fails the test with its
// output when it fails. Without promtool the test is skipped, unless APPKEEPER_REQUIRE_MARIADB
// says every tool must be there.
func Promtool(t testing.TB, args ...string) {
	t.Helper()
	binary := RequireBuilt(t, testservers.Promtool, "prometheus", false)
	if out, err := exec.Command(binary, args...).CombinedOutput(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
