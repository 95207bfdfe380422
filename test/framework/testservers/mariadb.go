// Package testservers starts the servers the backup data path is tested and measured against:
// MariaDB from the distribution's packages and versitygw, an S3 gateway over a folder, built into
// bin/; `make test-deps` installs both. It returns errors rather than failing a test, so that the
// benchmark runs them as well as the tests; testcluster and the backup tests wrap it for a
// testing.T.
package testservers

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"k8s.io/apimachinery/pkg/util/wait"
)

// MariaDB programs, found on the PATH.
const (
	MariaDBServer  = "mariadbd"
	MariaDBInstall = "mariadb-install-db"
)

// InstallDataDir makes a data directory at dir with mariadb-install-db, which takes seconds;
// StartMariaDB copies it for each server, which takes milliseconds. root has no password and
// logs in over the socket or TCP.
func InstallDataDir(dir string) error {
	install := exec.Command(MariaDBInstall, "--no-defaults", "--user="+CurrentUser(),
		"--datadir="+dir, "--auth-root-authentication-method=normal", "--skip-test-db",
		"--innodb-log-file-size=16M")
	if out, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", MariaDBInstall, err, out)
	}
	return nil
}

// MariaDBOptions say where a server keeps its files and how it starts.
type MariaDBOptions struct {
	// Dir holds the server's data folder, temporary files, socket, binary log and log; it must
	// exist.
	Dir string
	// Template is a data directory InstallDataDir made, copied to Dir/data.
	Template string
	// RootPassword is given to root once the server is up, as the MySQL images' entrypoints do.
	RootPassword string
	// PasswordSet says that root in Template already has RootPassword, as a copy of another
	// server's data has.
	PasswordSet bool
	// Args are more mariadbd flags; they come after the defaults and override them.
	Args []string
}

// MariaDB is a running server on a free loopback port, with a binary log.
type MariaDB struct {
	Port int
	Dir  string
	cmd  *exec.Cmd
	log  *os.File
	// args start the server again, on the same data and port; password is root's.
	args     []string
	password string
}

// StartMariaDB starts a server from a copy of o.Template and waits until root can log in with
// o.RootPassword over TCP.
func StartMariaDB(ctx context.Context, o MariaDBOptions) (_ *MariaDB, err error) {
	data := filepath.Join(o.Dir, "data")
	if err := CopyTree(o.Template, data); err != nil {
		return nil, err
	}
	// Temporary tables go to the server's own folder, where no other program's cleanup of /tmp
	// removes them while a statement uses them.
	tmp := filepath.Join(o.Dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, err
	}
	port, err := FreePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	args := append([]string{"--no-defaults", "--user=" + CurrentUser(), "--datadir=" + data, "--tmpdir=" + tmp,
		"--socket=" + filepath.Join(o.Dir, "mysqld.sock"), "--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--skip-name-resolve", "--innodb-log-file-size=16M", "--innodb-buffer-pool-size=64M",
		"--log-bin=" + filepath.Join(o.Dir, "binlog"), "--server-id=1", "--max-allowed-packet=64M"}, o.Args...)
	m := &MariaDB{Port: port, Dir: o.Dir, args: args, password: o.RootPassword}
	if err := m.start(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.Stop()
		}
	}()
	if o.PasswordSet {
		var db *sql.DB
		if db, err = m.waitFor(ctx, o.RootPassword, 30*time.Second); err == nil {
			_ = db.Close()
		}
	} else {
		err = m.setRootPassword(ctx, o.RootPassword)
	}
	if err != nil {
		out, _ := os.ReadFile(m.log.Name())
		return nil, fmt.Errorf("the server did not start: %w\n%s", err, out)
	}
	return m, nil
}

// start runs mariadbd with m's arguments, its output appended to its log.
func (m *MariaDB) start() (err error) {
	m.cmd = exec.Command(MariaDBServer, m.args...)
	if m.log, err = os.OpenFile(filepath.Join(m.Dir, "mysqld.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return err
	}
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	// The server must not outlive a program that dies without stopping it.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		_ = m.log.Close()
		return fmt.Errorf("start %s: %w", MariaDBServer, err)
	}
	return nil
}

// Restart starts a stopped server again on its data, on a new free port (its old one may have
// gone to a server of another test meanwhile), with more flags if given, and waits until root can
// log in.
func (m *MariaDB) Restart(ctx context.Context, extra ...string) error {
	port, err := FreePort("127.0.0.1")
	if err != nil {
		return err
	}
	m.Port = port
	m.args = append(m.args, fmt.Sprintf("--port=%d", port))
	m.args = append(m.args, extra...)
	if err := m.start(); err != nil {
		return err
	}
	db, err := m.waitFor(ctx, m.password, 30*time.Second)
	if err != nil {
		out, _ := os.ReadFile(m.log.Name())
		return fmt.Errorf("the server did not start again: %w\n%s", err, out)
	}
	return db.Close()
}

// setRootPassword waits for the server, then gives root its password on every host it has.
func (m *MariaDB) setRootPassword(ctx context.Context, password string) error {
	db, err := m.waitFor(ctx, "", 30*time.Second)
	if err != nil {
		return err
	}
	defer db.Close()
	// One session: a new one could not log in without the password once it is set.
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := conn.ExecContext(ctx, "ALTER USER 'root'@'"+host+"' IDENTIFIED BY '"+password+"'"); err != nil {
			return err
		}
	}
	return nil
}

// waitFor connects as root with password until the server answers or timeout has passed.
func (m *MariaDB) waitFor(ctx context.Context, password string, timeout time.Duration) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", password, "tcp", fmt.Sprintf("127.0.0.1:%d", m.Port)
	cfg.Timeout = 5 * time.Second
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	var last error
	if wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = db.PingContext(ctx)
		return last == nil, nil
	}) != nil {
		_ = db.Close()
		return nil, fmt.Errorf("root could not log in within %s: %w", timeout, last)
	}
	return db, nil
}

// Pid is the server's process id.
func (m *MariaDB) Pid() int { return m.cmd.Process.Pid }

// Stop kills the server and waits for it.
func (m *MariaDB) Stop() {
	_ = m.cmd.Process.Kill()
	_ = m.cmd.Wait()
	_ = m.log.Close()
}

// CurrentUser is the user the servers run as: mariadbd refuses root unless told so.
func CurrentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// CopyTree copies the files and folders of src to dst.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o660)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			_ = out.Close()
			return err
		}
		return out.Close()
	})
}

// Template is a data directory InstallDataDir makes once, on first use, for a test binary's
// servers to copy.
type Template struct {
	once sync.Once
	dir  string
	err  error
}

// Dir makes the data directory on its first call and returns it.
func (t *Template) Dir() (string, error) {
	t.once.Do(func() {
		t.dir, t.err = os.MkdirTemp("", "appkeeper-mariadb-template-")
		if t.err == nil {
			t.err = InstallDataDir(filepath.Join(t.dir, "data"))
		}
	})
	return filepath.Join(t.dir, "data"), t.err
}

// Remove removes the data directory, if it was made.
func (t *Template) Remove() {
	if t.dir != "" {
		_ = os.RemoveAll(t.dir)
	}
}

// RequireTool finds a program a test needs. When it is missing the test is skipped, or fails when
// APPKEEPER_REQUIRE_MARIADB says that the machine must have the servers' programs.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	found, err := exec.LookPath(name)
	if err == nil {
		return found
	}
	if os.Getenv("APPKEEPER_REQUIRE_MARIADB") != "" {
		t.Fatalf("%s is not installed: run `make test-deps`", name)
	}
	t.Skipf("%s is not installed; `make test-deps` installs it", name)
	return ""
}

// DirFor is Dir for a test that also needs tools beside the server's programs: the test is
// skipped or fails, as RequireTool says, when one is missing, and fails when the directory cannot
// be made.
func (t *Template) DirFor(tb testing.TB, tools ...string) string {
	tb.Helper()
	for _, tool := range append([]string{MariaDBServer, MariaDBInstall}, tools...) {
		RequireTool(tb, tool)
	}
	dir, err := t.Dir()
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}
