package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cli runs Main as a Job would, with env as its environment.
type cli struct {
	t   *testing.T
	env map[string]string
}

func (c cli) run(args ...string) (code int, stdout string, res Result) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, func(name string) string { return c.env[name] }, &out, &errOut)
	if line := strings.TrimSpace(out.String()); line != "" {
		if strings.Count(line, "\n") > 0 {
			c.t.Errorf("%v printed more than one line: %q", args, line)
		}
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			c.t.Errorf("%v printed %q, not a JSON Result: %v", args, line, err)
		}
	}
	return code, out.String(), res
}

// cliScenario is what the command line scenarios share: a backup in a volume of the source.
type cliScenario struct {
	target Target
	server []string
	dir    string
}

// commandLine runs the subcommands with the flags and environment the operator's Jobs give them.
func (env *backupEnv) commandLine(t *testing.T) {
	c := cliScenario{
		target: Target{Volume: t.TempDir(), Key: "cli/db/1"},
		server: []string{"--host=127.0.0.1", fmt.Sprintf("--port=%d", env.source.port)},
		dir:    t.TempDir(),
	}
	t.Run("dump", c.dump)
	t.Run("fetch", c.fetch)
	t.Run("verify", c.verify)
	t.Run("a failure is a Result", c.failure)
	t.Run("usage", c.usage)
	t.Run("install", c.install)
}

func (c cliScenario) dump(t *testing.T) {
	resultFile := filepath.Join(c.dir, "termination-log")
	dumper := cli{t, map[string]string{EnvMySQLPassword: backupPassword}}
	args := append(append([]string{CommandDump}, c.target.Args()...), c.server...)
	args = append(append(args, "--result="+resultFile), PruneArgs([]string{"cli/db/0"})...)
	code, stdout, res := dumper.run(args...)
	if code != exitOK || res.Error != "" || res.Artifact != "cli/db/1.sql.gz" || len(res.Pruned) != 1 {
		t.Fatalf("dump exited %d with %s", code, stdout)
	}
	if written, _ := os.ReadFile(resultFile); strings.TrimSpace(string(written)) != strings.TrimSpace(stdout) {
		t.Errorf("the result file holds %q, stdout %q", written, stdout)
	}
}

func (c cliScenario) fetch(t *testing.T) {
	// A restart: the data directory exists, so nothing is fetched.
	dataDir := filepath.Join(c.dir, "data")
	if err := os.MkdirAll(filepath.Join(dataDir, "mysql"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(c.dir, "restore.sql.gz")
	fetcher := cli{t, map[string]string{}}
	fetch := append(append([]string{CommandFetch}, c.target.Args()...), "--out="+out, "--result=")
	if code, stdout, _ := fetcher.run(append(fetch, "--unless-initialized="+dataDir)...); code != exitOK {
		t.Errorf("fetch into an initialised server exited %d: %s", code, stdout)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("fetch wrote the dump for a server that already has data")
	}
	if code, stdout, _ := fetcher.run(append(fetch, "--unless-initialized="+filepath.Join(c.dir, "empty"))...); code != exitOK {
		t.Errorf("fetch exited %d: %s", code, stdout)
	}
	if info, err := os.Stat(out); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("fetch wrote %v (%v), want a file readable by the server's user", info, err)
	}
}

func (c cliScenario) verify(t *testing.T) {
	verifier := cli{t, map[string]string{EnvMySQLPassword: rootPassword}}
	verify := append(append([]string{CommandVerify}, c.target.Args()...), "--result=")
	code, stdout, res := verifier.run(append(verify, c.server...)...)
	if code != exitOK || res.Verified == nil || !*res.Verified {
		t.Errorf("verify of the source itself exited %d: %s", code, stdout)
	}
	closed := []string{"--host=127.0.0.1", fmt.Sprintf("--port=%d", freePort(t)), "--wait-timeout=1s"}
	code, _, res = verifier.run(append(verify, closed...)...)
	if code != exitFailed || res.Verified != nil || !strings.Contains(res.Error, "did not accept connections within 1s") {
		t.Errorf("verify against no server exited %d with %+v", code, res)
	}
}

// failure: a failed subcommand reports a Result too, in the termination log, without the
// password.
func (c cliScenario) failure(t *testing.T) {
	resultFile := filepath.Join(c.dir, "failure-termination-log")
	wrong := cli{t, map[string]string{EnvMySQLPassword: wrongSecret}}
	code, _, res := wrong.run(append(append([]string{CommandDump, "--result=" + resultFile}, c.target.Args()...), c.server...)...)
	written, _ := os.ReadFile(resultFile)
	if code != exitFailed || !strings.Contains(res.Error, "refused the login") || strings.Contains(string(written), wrongSecret) ||
		!strings.Contains(string(written), "refused the login") {
		t.Errorf("dump with a wrong password exited %d, wrote %s", code, written)
	}
}

func (c cliScenario) usage(t *testing.T) {
	for _, args := range [][]string{{}, {"restore"}, {CommandInstall}, {CommandDump, "extra"}, {CommandFetch, "--no-such-flag"}} {
		if code, _, _ := (cli{t, nil}).run(args...); code != exitUsage {
			t.Errorf("%q exited %d, want %d", args, code, exitUsage)
		}
	}
}

func (c cliScenario) install(t *testing.T) {
	installed := filepath.Join(c.dir, "bin", "appkeeper")
	if err := os.MkdirAll(filepath.Dir(installed), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := (cli{t, nil}).run(CommandInstall, installed); code != exitOK || stdout != "" {
		t.Errorf("install exited %d: %s", code, stdout)
	}
	self, _ := os.Executable()
	want, _ := os.Stat(self)
	if got, err := os.Stat(installed); err != nil || got.Size() != want.Size() || got.Mode().Perm() != 0o755 {
		t.Errorf("installed %v (%v), want a copy of %s with mode 0755", got, err, self)
	}
}
