package seed

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

const rootPassword = "root-secret"

var template testservers.Template

func TestMain(m *testing.M) {
	// The server closes the connection that stops it.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	code := m.Run()
	template.Remove()
	os.Exit(code)
}

// donor starts a server holding a table of three rows with its binary log in its data folder, as
// a member's, and a donor serving copies of it on the loopback with secret.
func donor(t *testing.T, secret string) (*testservers.MariaDB, *sql.DB, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := testservers.StartMariaDB(ctx, testservers.MariaDBOptions{Dir: dir, Template: template.DirFor(t, "mariadb-backup", "mbstream"), RootPassword: rootPassword,
		Args: []string{"--log-bin=" + filepath.Join(dir, "data", "binlog"), "--gtid-strict-mode"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	db := open(t, "tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
	for _, stmt := range []string{"CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1), (2), (3)"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve, stop := context.WithCancel(ctx)
	d := &Donor{Secret: []byte(secret), Log: slog.New(slog.NewTextHandler(testWriter{t}, nil)), Copy: func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "mariadb-backup", "--backup", "--stream=mbstream", "--datadir="+filepath.Join(dir, "data"),
			"--host=127.0.0.1", fmt.Sprintf("--port=%d", s.Port), "--user=root", "--target-dir="+t.TempDir())
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+rootPassword)
		return cmd
	}}
	done := make(chan error, 1)
	go func() { done <- d.Serve(serve, l) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the donor stopped with %v", err)
		}
	})
	return s, db, l.Addr().String()
}

// member is a member named name whose every donor is at address, with secret.
func member(t *testing.T, name, dataDir, address, secret string, plan Plan) *Member {
	return &Member{
		Name: name, DataDir: dataDir, BinlogBase: "binlog", Secret: []byte(secret), Retry: 100 * time.Millisecond,
		Log:          slog.New(slog.NewTextHandler(testWriter{t}, nil)),
		DonorAddress: func(string) string { return address },
		Unpack: func(ctx context.Context, dir string) *exec.Cmd {
			return exec.CommandContext(ctx, "mbstream", "-x", "-C", dir)
		},
		Prepare: func(ctx context.Context, dir string) *exec.Cmd {
			return exec.CommandContext(ctx, "mariadb-backup", "--prepare", "--target-dir="+dir)
		},
		Position: Server{Command: []string{testservers.MariaDBServer, "--no-defaults", "--user=" + testservers.CurrentUser(),
			"--innodb-log-file-size=16M", "--innodb-buffer-pool-size=64M"}, RootPassword: rootPassword, Scratch: t.TempDir()}.Position,
		Plan: func() (Plan, error) { return plan, nil },
	}
}

// TestCopyReplicates seeds an empty member from a donor and starts a server on the copy: it holds
// the donor's rows and resumes replication exactly after them.
func TestCopyReplicates(t *testing.T) {
	src, srcDB, address := donor(t, "s3cret")
	var want string
	if err := srcDB.QueryRow("SELECT @@gtid_binlog_pos").Scan(&want); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := member(t, "db-1", data, address, "s3cret", Plan{Primary: "db-0"}).Seed(ctx); err != nil {
		t.Fatal(err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(data, "xtrabackup_*")); len(leftovers) > 0 || exists(filepath.Join(data, stagingDir)) {
		t.Errorf("the copy left %v and its staging folder in the data folder", leftovers)
	}
	copied := startOn(t, data)
	var rows int
	var slavePos string
	if err := copied.QueryRow("SELECT COUNT(*), @@gtid_slave_pos FROM app.t").Scan(&rows, &slavePos); err != nil {
		t.Fatal(err)
	}
	if rows != 3 || slavePos != want {
		t.Fatalf("the copy holds %d rows and resumes after %q; want 3 rows and %q, the donor's position", rows, slavePos, want)
	}
	if _, err := copied.Exec(fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', "+
		"MASTER_PASSWORD='%s', MASTER_USE_GTID=slave_pos", src.Port, rootPassword)); err != nil {
		t.Fatal(err)
	}
	if _, err := copied.Exec("START SLAVE"); err != nil {
		t.Fatal(err)
	}
	if _, err := srcDB.Exec("INSERT INTO app.t VALUES (4)"); err != nil {
		t.Fatal(err)
	}
	if _, err := srcDB.QueryRow("SELECT @@gtid_binlog_pos").Scan(&want), error(nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for rows != 4 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		_ = copied.QueryRow("SELECT COUNT(*) FROM app.t").Scan(&rows)
	}
	if rows != 4 {
		t.Fatalf("the copy replicated to %d rows, want 4: it resumed at the wrong position", rows)
	}
}

// TestRebuildKeepsErrantBinlogs rebuilds a member whose data left the history: its binary logs
// are kept under a name that says which request set them aside, and its data is the donor's. A
// second start with the same request keeps the data.
func TestRebuildKeepsErrantBinlogs(t *testing.T) {
	_, _, address := donor(t, "s3cret")
	data := t.TempDir()
	if err := testservers.CopyTree(template.DirFor(t, "mariadb-backup", "mbstream"), data); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"binlog.000001", "binlog.index"} {
		if err := os.WriteFile(filepath.Join(data, f), []byte("errant"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan := Plan{Primary: "db-1", Donor: "db-2", Rebuild: "7"}
	if err := member(t, "db-0", data, address, "s3cret", plan).Seed(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"appkeeper-errant-7-binlog.000001", "appkeeper-errant-7-binlog.index"} {
		if b, err := os.ReadFile(filepath.Join(data, f)); err != nil || string(b) != "errant" {
			t.Errorf("the errant binary log %s was not kept: %v", f, err)
		}
	}
	if !exists(filepath.Join(data, "app", "t.ibd")) {
		t.Fatal("the rebuilt data lacks the donor's table")
	}
	marker := filepath.Join(data, "app", "kept")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := member(t, "db-0", data, "127.0.0.1:1", "s3cret", plan).Seed(ctx); err != nil || !exists(marker) {
		t.Fatalf("a second start with the same request replaced the data (err %v)", err)
	}
}

// TestCopyRefusesWrongSecret: a receiver without the cluster's secret gets nothing, and says so.
func TestCopyRefusesWrongSecret(t *testing.T) {
	_, _, address := donor(t, "s3cret")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := fetch(ctx, address, []byte("guess"), exec.CommandContext(ctx, "mbstream", "-x", "-C", t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("a wrong secret got %v, want the copy refused", err)
	}
}

// TestSource: before any primary, the first member initialises its own
// data and the others copy it; an initialised member keeps its data unless asked to rebuild.
func TestSource(t *testing.T) {
	for _, c := range []struct {
		self        string
		plan        Plan
		initialized bool
		seededFor   string
		want        string
	}{
		{"db-0", Plan{}, false, "", ""},
		{"db-2", Plan{}, false, "", "db-0"},
		{"db-0", Plan{Primary: "db-1"}, false, "", "db-1"},
		{"db-1", Plan{Primary: "db-1", Donor: "db-2"}, false, "", "db-2"},
		{"db-2", Plan{Primary: "db-1", Donor: "db-2"}, false, "", "db-1"},
		{"db-2", Plan{Primary: "db-1", Donor: "db-0", Rebuild: "4"}, true, "", "db-0"},
		{"db-2", Plan{Primary: "db-1", Rebuild: "4"}, true, "4", ""},
		{"db-2", Plan{Primary: "db-1"}, true, "", ""},
	} {
		got, err := source(c.self, c.plan, c.initialized, c.seededFor)
		if err != nil || got != c.want {
			t.Errorf("source(%s, %+v, initialized %v, seeded for %q) = %q, %v; want %q", c.self, c.plan, c.initialized, c.seededFor, got, err, c.want)
		}
	}
}

// startOn starts a server on a copy of data and returns root's connection.
func startOn(t *testing.T, data string) *sql.DB {
	t.Helper()
	s, err := testservers.StartMariaDB(context.Background(), testservers.MariaDBOptions{Dir: t.TempDir(), Template: data,
		RootPassword: rootPassword, PasswordSet: true, Args: []string{"--server-id=2", "--gtid-strict-mode"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return open(t, "tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
}

func open(t *testing.T, network, address string) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPassword, network, address
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
