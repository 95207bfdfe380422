package backup

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/appkeeper/appkeeper/internal/testutil"
)

// The servers the tests run against are real: MariaDB from the distribution's packages (as
// hack/test-deps.sh installs it) and versitygw, an S3 gateway over a folder, which the same
// script builds into bin/.

const (
	rootPassword   = "root-pässword"
	backupPassword = "backup-secret"
)

func TestMain(m *testing.M) {
	code := m.Run()
	template.cleanup()
	os.Exit(code)
}

// requireTool returns the path of a program the tests need, or skips the test without it,
// unless APPKEEPER_REQUIRE_MARIADB says the machine must have it (as `make test` does).
func requireTool(t testing.TB, path string) string {
	t.Helper()
	found, err := exec.LookPath(path)
	if err == nil {
		return found
	}
	if os.Getenv("APPKEEPER_REQUIRE_MARIADB") != "" {
		t.Fatalf("%s is not installed: run `make test-deps`", path)
	}
	t.Skipf("%s is not installed; `make test-deps` installs it", path)
	return ""
}

// dataTemplate is a data directory made once by mariadb-install-db, which takes seconds, and
// copied for each server, which takes milliseconds.
type dataTemplate struct {
	once sync.Once
	dir  string
	err  error
}

var template dataTemplate

func (d *dataTemplate) get(t testing.TB) string {
	t.Helper()
	d.once.Do(func() {
		d.dir, d.err = os.MkdirTemp("", "appkeeper-mariadb-template-")
		if d.err != nil {
			return
		}
		install := exec.Command("mariadb-install-db", "--no-defaults", "--user="+currentUser(),
			"--datadir="+filepath.Join(d.dir, "data"), "--auth-root-authentication-method=normal", "--skip-test-db",
			"--innodb-log-file-size=16M")
		if out, err := install.CombinedOutput(); err != nil {
			d.err = fmt.Errorf("mariadb-install-db: %w\n%s", err, out)
		}
	})
	if d.err != nil {
		t.Fatal(d.err)
	}
	return filepath.Join(d.dir, "data")
}

func (d *dataTemplate) cleanup() {
	if d.dir != "" {
		_ = os.RemoveAll(d.dir)
	}
}

// mariadb is a server on a free loopback port whose root (over TCP) has rootPassword and which
// has the backup account with exactly the privileges the operator grants it.
type mariadb struct {
	port int
	dir  string
	root *sql.DB
}

func startMariaDB(t *testing.T) *mariadb {
	t.Helper()
	server := requireTool(t, "mariadbd")
	requireTool(t, "mariadb-install-db")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := copyTree(template.get(t), data); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	mysqld := exec.Command(server, "--no-defaults", "--user="+currentUser(), "--datadir="+data,
		"--socket="+filepath.Join(dir, "mysqld.sock"), "--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--skip-name-resolve", "--innodb-log-file-size=16M", "--innodb-buffer-pool-size=64M",
		"--log-bin="+filepath.Join(dir, "binlog"), "--server-id=1", "--max-allowed-packet=64M")
	logFile, err := os.Create(filepath.Join(dir, "mysqld.log"))
	if err != nil {
		t.Fatal(err)
	}
	mysqld.Stdout, mysqld.Stderr = logFile, logFile
	if err := mysqld.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = mysqld.Process.Kill()
		_ = mysqld.Wait()
		_ = logFile.Close()
	})
	m := &mariadb{port: port, dir: dir}
	m.root = m.waitForRoot(t, logFile.Name())
	t.Cleanup(func() { _ = m.root.Close() })
	m.exec(t, "CREATE USER '"+AccountUser+"'@'%' IDENTIFIED BY '"+backupPassword+"'",
		"GRANT "+AccountPrivileges+" ON *.* TO '"+AccountUser+"'@'%'")
	return m
}

// waitForRoot waits for the server, then gives root its password as the images' entrypoints do.
func (m *mariadb) waitForRoot(t *testing.T, log string) *sql.DB {
	t.Helper()
	fresh := Connection{Host: "127.0.0.1", Port: m.port, User: "root"}
	db, err := fresh.waitFor(context.Background(), 30*time.Second)
	if err != nil {
		out, _ := os.ReadFile(log)
		t.Fatalf("the server did not start: %v\n%s", err, out)
	}
	// One session: the pool keeps none idle, and a new one could not log in without the password.
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := conn.ExecContext(context.Background(), "ALTER USER 'root'@'"+host+"' IDENTIFIED BY '"+rootPassword+"'"); err != nil {
			t.Fatal(err)
		}
	}
	_ = conn.Close()
	_ = db.Close()
	db, err = m.rootConnection().connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func (m *mariadb) rootConnection() Connection {
	return Connection{Host: "127.0.0.1", Port: m.port, User: "root", Password: rootPassword}
}

func (m *mariadb) backupConnection() Connection {
	return Connection{Host: "127.0.0.1", Port: m.port, User: AccountUser, Password: backupPassword}
}

func (m *mariadb) exec(t testing.TB, statements ...string) {
	t.Helper()
	for _, statement := range statements {
		if _, err := m.root.Exec(statement); err != nil {
			t.Fatalf("%s: %v", statement, err)
		}
	}
}

// restore loads a fetched file as the MySQL images' entrypoints do: gunzip -c FILE | mysql, as
// root.
func (m *mariadb) restore(t *testing.T, file string) {
	t.Helper()
	gunzip := exec.Command("gunzip", "-c", file)
	client := exec.Command(requireTool(t, "mysql"), "--no-defaults", "--protocol=TCP", "-h127.0.0.1",
		fmt.Sprintf("-P%d", m.port), "-uroot", "--max-allowed-packet=64M")
	client.Env = append(os.Environ(), EnvMySQLPassword+"="+rootPassword)
	pipe, err := gunzip.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	client.Stdin = pipe
	var gunzipErr, clientErr strings.Builder
	gunzip.Stderr, client.Stderr = &gunzipErr, &clientErr
	if err := gunzip.Start(); err != nil {
		t.Fatal(err)
	}
	if err := client.Run(); err != nil {
		t.Fatalf("mysql: %v\n%s", err, clientErr.String())
	}
	if err := gunzip.Wait(); err != nil {
		t.Fatalf("gunzip: %v\n%s", err, gunzipErr.String())
	}
}

// s3Server is versitygw serving a folder, with one bucket.
type s3Server struct {
	*testutil.ObjectStore
	endpoint, bucket, dir string
	client                *minio.Client
}

// startVersityGW starts versitygw over http, or over https with a certificate of ca when it is
// not nil.
func startVersityGW(t *testing.T, ca *testCA) *s3Server {
	t.Helper()
	var files *testutil.ObjectStoreTLS
	if ca != nil {
		files = &testutil.ObjectStoreTLS{CertFile: ca.certFile, KeyFile: ca.keyFile, Pool: ca.pool}
	}
	store := testutil.StartObjectStore(t, "127.0.0.1", files)
	return &s3Server{ObjectStore: store, endpoint: store.Endpoint, bucket: store.Bucket, dir: store.Dir, client: store.Client}
}

func (s *s3Server) target(key string) Target {
	return Target{S3Endpoint: s.endpoint, S3Bucket: s.bucket, S3Region: "us-east-1", S3PathStyle: true, Key: key}
}

func (s *s3Server) credentials() Credentials {
	return Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// copyTree copies the files and folders of src to dst.
func copyTree(src, dst string) error {
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
