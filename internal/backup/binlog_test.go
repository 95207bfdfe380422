package backup

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/internal/binlog"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// clusterArgs are the replication settings the operator gives a cluster's members.
func clusterArgs(serverID int) []string {
	return []string{"--log-bin=binlog", fmt.Sprintf("--server-id=%d", serverID), "--gtid-strict-mode",
		"--log-slave-updates", "--binlog-format=ROW", "--sync-binlog=1"}
}

// row is one write of the writer: when its INSERT was sent, when it was acknowledged, and the
// GTID the server gave it.
type row struct {
	id             int
	sent, acked    time.Time
	gtid           binlog.GTID
	acknowledgedOK bool
}

// writer inserts a row every few milliseconds on one connection until stopped.
type writer struct {
	t    *testing.T
	conn *sql.Conn
	mu   sync.Mutex
	rows []row
	next int
}

func startWriter(t *testing.T, m *mariadb) *writer {
	t.Helper()
	conn, err := m.root.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &writer{t: t, conn: conn, next: 1}
}

// writeFor inserts rows for d.
func (w *writer) writeFor(d time.Duration) {
	w.t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); {
		w.write()
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *writer) write() row {
	w.t.Helper()
	ctx := context.Background()
	r := row{id: w.next, sent: time.Now()}
	w.next++
	_, err := w.conn.ExecContext(ctx, "INSERT INTO shop.orders (id, note) VALUES (?, 'order')", r.id)
	r.acked = time.Now()
	if err != nil {
		w.t.Fatalf("insert %d: %v", r.id, err)
	}
	var gtid string
	if err := w.conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&gtid); err != nil {
		w.t.Fatal(err)
	}
	if r.gtid, err = binlog.ParseGTID(gtid); err != nil {
		w.t.Fatal(err)
	}
	r.acknowledgedOK = true
	w.mu.Lock()
	w.rows = append(w.rows, r)
	w.mu.Unlock()
	return r
}

// archiveStore is where a test keeps its backups and its binary log archive.
type archiveStore struct {
	target      Target // without a key
	credentials Credentials
	passphrase  string
}

func (a archiveStore) at(key string) Target {
	t := a.target
	t.Key = key
	return t
}

// shipInBackground ships m's binary log to the archive until the test ends.
func shipInBackground(t *testing.T, m *mariadb, store archiveStore, archive string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Ship(ctx, ShipOptions{Target: store.at(archive), Credentials: store.credentials, EncryptionKey: store.passphrase,
			Connection: m.rootConnection(), Interval: 100 * time.Millisecond})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ship: %v", err)
		}
	})
}

// waitShipped waits until the archive's chain from the base reaches m's newest transaction.
func waitShipped(t *testing.T, m *mariadb, archiveAt archiveStore, archive string) {
	t.Helper()
	var position string
	if err := m.root.QueryRow("SELECT @@gtid_binlog_pos").Scan(&position); err != nil {
		t.Fatal(err)
	}
	want, err := binlog.ParsePosition(position)
	if err != nil {
		t.Fatal(err)
	}
	store, err := openStorage(archiveAt.target, archiveAt.credentials)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pieces, err := listPieces(context.Background(), store, archive)
		if err != nil {
			t.Fatal(err)
		}
		chain, err := binlog.Plan(pieces, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if chain.Last >= binlog.SeqIn(want, 0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the archive reached sequence number %d, the server is at %s (gap: %q)", chain.Last, position, chain.Gap)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restoreTo loads the base backup and the replay's SQL into a new server and returns the ids
// of shop.orders, or nil when the table does not exist.
func restoreTo(t *testing.T, store archiveStore, base string, o ReplayOptions) (map[int]bool, Result) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	o.Target, o.Out = store.at(base), filepath.Join(dir, "replay.sql")
	o.Credentials, o.EncryptionKey = store.credentials, store.passphrase
	res, err := Replay(ctx, o)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	dump := filepath.Join(dir, "base.sql.gz")
	if _, err := Fetch(ctx, FetchOptions{Target: store.at(base), Credentials: store.credentials, EncryptionKey: store.passphrase, Out: dump}); err != nil {
		t.Fatal(err)
	}
	restored := startMariaDB(t)
	restored.restore(t, dump)
	restored.runSQL(t, o.Out)
	var exists int
	if err := restored.root.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'orders'").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists == 0 {
		return nil, res
	}
	rows, err := restored.root.Query("SELECT id FROM shop.orders")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[int]bool{}
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	return ids, res
}

// runSQL runs a file of SQL as root, as the server's initialisation runs the replay.
func (m *mariadb) runSQL(t *testing.T, file string) {
	t.Helper()
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	client := exec.Command(testservers.RequireTool(t, "mysql"), "--no-defaults", "--protocol=TCP", "-h127.0.0.1",
		fmt.Sprintf("-P%d", m.port), "-uroot", "--max-allowed-packet=64M")
	client.Env = append(os.Environ(), EnvMySQLPassword+"="+rootPassword)
	client.Stdin = in
	out, err := client.CombinedOutput()
	if err != nil {
		t.Fatalf("mysql < %s: %v\n%s", file, err, out)
	}
}
