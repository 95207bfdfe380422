package mysql

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// mariaDB is a MariaDB server from the distribution's packages (the same client protocol and
// tools as MySQL's), on a data directory of the test's own, listening on 127.0.0.1:port.
type mariaDB struct {
	data, socket string
	port         int
	cmd          *exec.Cmd
}

// newMariaDB initialises a data directory, or skips the test where MariaDB is not installed
// (unless APPKEEPER_REQUIRE_MARIADB says it must be).
func newMariaDB(t *testing.T) *mariaDB {
	t.Helper()
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if os.Getenv("APPKEEPER_REQUIRE_MARIADB") != "" {
			t.Fatal("mariadbd is not installed: run `make test-deps`")
		}
		t.Skip("mariadbd is not installed; `make test` installs it")
	}
	dir := t.TempDir()
	m := &mariaDB{data: filepath.Join(dir, "data"), socket: filepath.Join(dir, "mysqld.sock"), port: testcluster.FreePort(t)}
	install := exec.Command("mariadb-install-db", "--no-defaults", "--user="+currentUser(), "--datadir="+m.data,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	t.Cleanup(m.stop)
	return m
}

// start runs the server with extra options, as mysqld reads them from my.cnf, and waits until it
// answers.
func (m *mariaDB) start(t *testing.T, extra ...string) {
	t.Helper()
	args := append([]string{"--no-defaults", "--user=" + currentUser(), "--datadir=" + m.data, "--socket=" + m.socket,
		"--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", m.port), "--skip-name-resolve"}, extra...)
	m.cmd = exec.Command("mariadbd", args...)
	logFile, err := os.OpenFile(filepath.Join(filepath.Dir(m.data), "mysqld.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logFile.Close() })
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var notLive error
	if wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		notLive = m.run(LivenessCommand)
		return notLive == nil, nil
	}) != nil {
		log, _ := os.ReadFile(logFile.Name())
		t.Fatalf("the server did not start: %v\n%s", notLive, log)
	}
}

func (m *mariaDB) stop() {
	if m.cmd != nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
		m.cmd = nil
	}
}

// run runs a client command against the server over TCP, with env added to a bare environment.
func (m *mariaDB) run(cmd []string, env ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	c.Env = append([]string{"PATH=" + os.Getenv("PATH"), fmt.Sprintf("MYSQL_TCP_PORT=%d", m.port)}, env...)
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// asRoot runs SQL as root over the socket, which needs no password on a fresh data directory.
func (m *mariaDB) asRoot(t *testing.T, sql string) {
	t.Helper()
	if out, err := exec.Command("mysql", "--no-defaults", "-S", m.socket, "-u", "root", "-e", sql).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", sql, err, out)
	}
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// query runs SQL as root over the socket and returns the rows, tab-separated.
func (m *mariaDB) query(t *testing.T, sql string) string {
	t.Helper()
	out, err := exec.Command("mysql", "--no-defaults", "-S", m.socket, "-u", "root", "-N", "-B", "-e", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", sql, err, out)
	}
	return strings.TrimSpace(string(out))
}

// queryAs runs SQL as user over TCP and returns the rows, tab-separated.
func (m *mariaDB) queryAs(t *testing.T, user, password, sql string) string {
	t.Helper()
	c := exec.Command("mysql", "--no-defaults", "--protocol=TCP", "-h", "127.0.0.1", "-P", strconv.Itoa(m.port), "-u", user, "-N", "-B", "-e", sql)
	c.Env = append(os.Environ(), "MYSQL_PWD="+password)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as %s: %v\n%s", sql, user, err, out)
	}
	return strings.TrimSpace(string(out))
}

// flags are the options of a my.cnf's [mysqld] section as command-line flags, but those in skip.
func flags(cnf string, skip ...string) []string {
	var out []string
	for _, line := range strings.Split(cnf, "\n") {
		name, _, _ := strings.Cut(line, "=")
		if line == "" || strings.HasPrefix(line, "[") || slices.Contains(skip, name) {
			continue
		}
		out = append(out, "--"+line)
	}
	return out
}
