package backup

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// The servers the tests run against are real: MariaDB from the distribution's packages and
// versitygw, an S3 gateway over a folder, built into bin/; `make test-deps` installs both.

const (
	rootPassword   = "root-pässword"
	backupPassword = "backup-secret"
)

// template is the data directory every server copies.
var template testservers.Template

// mariadb is a server on a free loopback port whose root (over TCP) has rootPassword and which
// has the backup account with exactly the privileges the operator grants it.
type mariadb struct {
	port int
	dir  string
	root *sql.DB
}

func startMariaDB(t *testing.T, args ...string) *mariadb {
	t.Helper()
	server, err := testservers.StartMariaDB(context.Background(), testservers.MariaDBOptions{
		Dir: t.TempDir(), Template: template.DirFor(t), RootPassword: rootPassword, Args: args,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Stop)
	m := &mariadb{port: server.Port, dir: server.Dir}
	m.root, err = m.rootConnection().connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.root.Close() })
	m.exec(t, "CREATE USER '"+AccountUser+"'@'%' IDENTIFIED BY '"+backupPassword+"'",
		"GRANT "+AccountPrivileges+" ON *.* TO '"+AccountUser+"'@'%'")
	return m
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
	client := exec.Command(testservers.RequireTool(t, "mysql"), "--no-defaults", "--protocol=TCP", "-h127.0.0.1",
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
	*testcluster.ObjectStore
	endpoint, bucket, dir string
	client                *minio.Client
}

// startVersityGW starts versitygw over http, or over https when tlsFiles is not nil.
func startVersityGW(t *testing.T, tlsFiles *testcluster.ObjectStoreTLS) *s3Server {
	t.Helper()
	store := testcluster.StartObjectStore(t, "127.0.0.1", tlsFiles)
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
	port, err := testservers.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return port
}
