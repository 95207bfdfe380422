package backup

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestDumpWhileWriting backs up a server that keeps committing transfers between accounts during
// the dump. The restore must verify against the manifest, whose checksums were taken in the dump's
// own snapshot, and keep the invariant every transaction keeps; writers must keep going while
// the dump runs.
func TestDumpWhileWriting(t *testing.T) {
	source := startMariaDB(t)
	source.exec(t,
		"CREATE DATABASE bank CHARACTER SET utf8mb4",
		"CREATE TABLE bank.accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL)",
		"INSERT INTO bank.accounts SELECT seq, 1000 FROM bank.seq_1_to_20",
		`CREATE TABLE bank.transfers (id BIGINT AUTO_INCREMENT PRIMARY KEY, from_id INT, to_id INT,
			amount INT, note VARCHAR(100))`,
		// Enough data that the dump takes a while, so that writes happen during it.
		"CREATE TABLE bank.history (id INT PRIMARY KEY, payload VARCHAR(200))",
		"INSERT INTO bank.history SELECT seq, REPEAT(MD5(seq), 6) FROM bank.seq_1_to_100000",
	)
	s3 := startVersityGW(t, nil)
	target := s3.target("busy/bank/1")

	w := startTransfers(t, source.root)
	w.waitFor(t, 50)
	before := w.count.Load()
	res, err := Dump(context.Background(), DumpOptions{Target: target, Credentials: s3.credentials(),
		Connection: source.backupConnection()})
	during := w.count.Load() - before
	w.waitFor(t, w.count.Load()+20) // writers go on after the dump too
	w.stop(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d transfers were committed while the dump ran", during)
	if during < 10 {
		t.Errorf("only %d transfers were committed during the dump: writers were held", during)
	}
	if res.Tables != 3 {
		t.Errorf("result = %+v, want 3 tables", res)
	}

	restored := startMariaDB(t)
	restoreAndVerify(t, restored, target, s3.credentials())
	var total, logged int64
	if err := restored.root.QueryRow("SELECT SUM(balance), (SELECT COUNT(*) FROM bank.transfers) FROM bank.accounts").
		Scan(&total, &logged); err != nil {
		t.Fatal(err)
	}
	if total != 20*1000 || logged == 0 || logged >= w.count.Load() {
		t.Errorf("restored: total balance %d (want 20000), %d transfers of %d (want some, not all)", total, logged,
			w.count.Load())
	}
}

// restoreAndVerify fetches the backup at target into restored and requires verify to pass.
func restoreAndVerify(t *testing.T, restored *mariadb, target Target, creds Credentials) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "restore.sql.gz")
	if _, err := Fetch(context.Background(), FetchOptions{Target: target, Credentials: creds, Out: out}); err != nil {
		t.Fatal(err)
	}
	restored.restore(t, out)
	verified, err := Verify(context.Background(), VerifyOptions{Target: target, Credentials: creds,
		Connection: restored.rootConnection()})
	if err != nil {
		t.Fatal(err)
	}
	if verified.Verified == nil || !*verified.Verified {
		t.Fatalf("the dump and its checksums are not of one instant: %q", verified.Mismatches)
	}
}

// transfers are writers that commit transfers until stopped.
type transfers struct {
	count  atomic.Int64
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   chan error
}

func startTransfers(t *testing.T, db *sql.DB) *transfers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &transfers{cancel: cancel, errs: make(chan error, 2)}
	t.Cleanup(cancel)
	for range 2 {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			if err := keepTransferring(ctx, db, &w.count); err != nil {
				w.errs <- err
			}
		}()
	}
	return w
}

// waitFor waits until n transfers were committed.
func (w *transfers) waitFor(t *testing.T, n int64) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		select {
		case err := <-w.errs:
			return false, fmt.Errorf("a writer stopped: %w", err)
		default:
			return w.count.Load() >= n, nil
		}
	})
	switch {
	case wait.Interrupted(err):
		t.Fatalf("only %d transfers were committed in 30s", w.count.Load())
	case err != nil:
		t.Fatal(err)
	}
}

func (w *transfers) stop(t *testing.T) {
	t.Helper()
	w.cancel()
	w.wg.Wait()
	close(w.errs)
	for err := range w.errs {
		t.Fatalf("a writer failed: %v", err)
	}
}

// keepTransferring commits transfers until ctx ends: each moves an amount between two accounts
// and logs it, in one transaction, so the total balance never changes.
func keepTransferring(ctx context.Context, db *sql.DB, count *atomic.Int64) error {
	for ctx.Err() == nil {
		from, to, amount := rand.IntN(20)+1, rand.IntN(20)+1, rand.IntN(50)+1
		err := transfer(ctx, db, from, to, amount)
		if ctx.Err() != nil {
			// Cancelled mid-transfer: the test is over, and the rolled-back transfer changed nothing.
			return nil //nolint:nilerr // the error is the cancellation itself
		}
		if err != nil {
			if strings.Contains(err.Error(), "Deadlock") {
				continue
			}
			return err
		}
		count.Add(1)
	}
	return nil
}

func transfer(ctx context.Context, db *sql.DB, from, to, amount int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, statement := range []struct {
		query string
		args  []any
	}{
		{"UPDATE bank.accounts SET balance = balance - ? WHERE id = ?", []any{amount, from}},
		{"UPDATE bank.accounts SET balance = balance + ? WHERE id = ?", []any{amount, to}},
		{"INSERT INTO bank.transfers (from_id, to_id, amount, note) VALUES (?, ?, ?, ?)", []any{from, to, amount, nonASCII}},
	} {
		if _, err := tx.ExecContext(ctx, statement.query, statement.args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// TestEmptyServer backs up a server that holds no database of its own, as a MySQL without
// spec.database is before its first upgrade: the backup succeeds, restores and verifies.
func TestEmptyServer(t *testing.T) {
	server := startMariaDB(t)
	target := Target{Volume: t.TempDir(), Key: "ns/empty/1"}
	res, err := Dump(context.Background(), DumpOptions{Target: target, Connection: server.backupConnection()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Databases != 0 || res.Tables != 0 || res.Size == 0 {
		t.Errorf("result = %+v", res)
	}
	restoreAndVerify(t, server, target, Credentials{})
}
