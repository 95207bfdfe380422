package backup

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

const wrongSecret = "not-the-secret-at-all"

// storageFailures: a store that cannot be reached, refuses the credentials or lacks the bucket,
// a missing volume and a refused login fail the dump quickly, with a sentence that names the
// cause and no secret, and leave nothing behind.
func (env *backupEnv) storageFailures(t *testing.T) {
	ctx := context.Background()
	conn, creds := env.source.backupConnection(), env.s3.credentials()
	badPassword := conn
	badPassword.Password = wrongSecret
	missingBucket := env.s3.target("fail/bucket")
	missingBucket.S3Bucket = "no-such-bucket"
	for _, tt := range []struct {
		name   string
		target Target
		creds  Credentials
		conn   Connection
		want   string
	}{
		{"unreachable endpoint", Target{S3Endpoint: fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), S3Bucket: "backups",
			S3PathStyle: true, Key: "fail/unreachable"}, creds, conn, "cannot reach the object store at http://127.0.0.1:"},
		{"wrong secret key", env.s3.target("fail/secret"), Credentials{env.s3.AccessKey, wrongSecret}, conn,
			"refused the credentials"},
		{"unknown access key", env.s3.target("fail/access"), Credentials{"nobody", wrongSecret}, conn,
			"refused the credentials"},
		{"missing bucket", missingBucket, creds, conn, `the bucket "no-such-bucket" does not exist`},
		{"missing volume", Target{Volume: "/nonexistent/appkeeper", Key: "fail/volume"}, creds, conn,
			"the backup volume at /nonexistent/appkeeper cannot be used"},
		{"wrong MySQL password", env.s3.target("fail/password"), creds, badPassword,
			`refused the login of user "appkeeper_backup"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := Dump(ctx, DumpOptions{Target: tt.target, Credentials: tt.creds, Connection: tt.conn})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("dump = %v, want an error naming %q", err, tt.want)
			}
			t.Log(err)
			if strings.Contains(err.Error(), wrongSecret) || strings.Contains(err.Error(), env.s3.SecretKey) {
				t.Errorf("the error shows a secret: %v", err)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("the dump took %s to fail", took)
			}
			if res.Key != tt.target.Key || res.Artifact != "" {
				t.Errorf("result = %+v", res)
			}
		})
	}
	requireNoObjects(t, env.s3, "fail/")
}

// dumpFailures: a mysqldump that fails before its transaction began, or after writing the whole
// dump, fails the backup with its own last words, leaves no object, and leaves the server
// unlocked.
func (env *backupEnv) dumpFailures(t *testing.T) {
	ctx := context.Background()
	tool, err := findDumpTool(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	env.source.exec(t, "CREATE DATABASE IF NOT EXISTS scratch", "CREATE TABLE IF NOT EXISTS scratch.writes (id INT)")
	dir := t.TempDir()
	for _, tt := range []struct {
		name, script, want string
		cancelAfter        time.Duration
	}{
		{"fails at once", `echo "mysqldump: unknown variable 'nonsense=1'" >&2; exit 7`,
			"mysqldump failed (exit status 7): mysqldump: unknown variable 'nonsense=1'", 0},
		{"fails at the end", `"$real" "$@"; echo "warning: ignored" >&2
			echo "mysqldump: Error 2013: Lost connection to server during query when dumping table files" >&2; exit 2`,
			"mysqldump failed (exit status 2): mysqldump: Error 2013: Lost connection", 0},
		// As when the Job's pod is deleted: SIGTERM cancels the dump while it uploads.
		{"is cancelled", `"$real" "$@"; exec sleep 60`, "context canceled", 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			body := "#!/bin/sh\nreal=" + tool.path + "\n[ \"$1\" = --version ] && exec \"$real\" --version\n" + tt.script + "\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			target := env.s3.target("fail/dump/" + filepath.Base(script))
			dumpCtx := ctx
			if tt.cancelAfter > 0 {
				var cancel context.CancelFunc
				dumpCtx, cancel = context.WithCancel(ctx)
				defer time.AfterFunc(tt.cancelAfter, cancel).Stop()
			}
			_, err := Dump(dumpCtx, DumpOptions{Target: target, Credentials: env.s3.credentials(),
				Connection: env.source.backupConnection(), DumpCommand: script})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("dump = %v, want an error naming %q", err, tt.want)
			}
			t.Log(err)
			writeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := env.source.root.ExecContext(writeCtx, "INSERT INTO scratch.writes VALUES (1)"); err != nil {
				t.Errorf("a write after the failed dump: %v (is the server still locked?)", err)
			}
		})
	}
	requireNoObjects(t, env.s3, "fail/")
	// A failed multipart upload is aborted, not left for the store to keep.
	for upload := range env.s3.client.ListIncompleteUploads(ctx, env.s3.bucket, "fail/", true) {
		if upload.Err == nil {
			t.Errorf("an upload was left incomplete: %s", upload.Key)
		}
	}
}

func requireNoObjects(t *testing.T, s *s3Server, prefix string) {
	t.Helper()
	for object := range s.client.ListObjects(context.Background(), s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if object.Err != nil {
			t.Fatal(object.Err)
		}
		t.Errorf("a failed dump left %s", object.Key)
	}
}

// longStatement: a statement that has run for long makes the dump wait for it, then give up,
// rather than take the global read lock, which would stall every query on the statement's
// tables until it ends.
func (env *backupEnv) longStatement(t *testing.T) {
	ctx := context.Background()
	env.source.exec(t, "CREATE DATABASE IF NOT EXISTS scratch", "CREATE TABLE IF NOT EXISTS scratch.writes (id INT)",
		"INSERT INTO scratch.writes VALUES (0)")
	long := make(chan error, 1)
	go func() {
		_, err := env.source.root.ExecContext(ctx, "SELECT SLEEP(4) FROM scratch.writes LIMIT 1")
		long <- err
	}()
	time.Sleep(1100 * time.Millisecond) // the statement has run for a second
	start := time.Now()
	_, err := Dump(ctx, DumpOptions{Target: env.s3.target("fail/long"), Credentials: env.s3.credentials(),
		Connection: env.source.backupConnection(), LockTimeout: time.Second, LongStatement: time.Second})
	if err == nil || !strings.Contains(err.Error(), "the global read lock would stall every query on its tables") ||
		!strings.Contains(err.Error(), "SLEEP(4)") {
		t.Errorf("dump during a long statement = %v, want it to give up", err)
	}
	t.Log(err)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the dump took %s to give up", took)
	}
	// Nothing was flushed: the table is as usable as before.
	writeCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := env.source.root.ExecContext(writeCtx, "INSERT INTO scratch.writes VALUES (2)"); err != nil {
		t.Errorf("a write while the long statement still runs: %v", err)
	}
	if err := <-long; err != nil {
		t.Fatal(err)
	}
	requireNoObjects(t, env.s3, "fail/long")
}

// lockTimeout: a session that holds a table locked keeps the global read lock from being
// granted; the dump gives up after its timeout rather than hold every write behind its request.
func (env *backupEnv) lockTimeout(t *testing.T) {
	ctx := context.Background()
	locker := env.lockScratchTable(t)
	start := time.Now()
	_, err := Dump(ctx, DumpOptions{Target: env.s3.target("fail/lock"), Credentials: env.s3.credentials(),
		Connection: env.source.backupConnection(), LockTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "the global read lock was not granted within 1s") {
		t.Errorf("dump while a table is locked = %v, want the lock to time out", err)
	}
	t.Log(err)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the dump took %s to give up", took)
	}
	if _, err := locker.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	env.requireUnlocked(t, 3)
	requireNoObjects(t, env.s3, "fail/lock")
}

// lockScratchTable holds the table scratch.writes locked for writes, on a session of its own that
// the test closes when it ends.
func (env *backupEnv) lockScratchTable(t *testing.T) *sql.Conn {
	t.Helper()
	ctx := context.Background()
	env.source.exec(t, "CREATE DATABASE IF NOT EXISTS scratch", "CREATE TABLE IF NOT EXISTS scratch.writes (id INT)")
	locker, err := env.source.root.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = locker.Close() })
	if _, err := locker.ExecContext(ctx, "LOCK TABLES scratch.writes WRITE"); err != nil {
		t.Fatal(err)
	}
	return locker
}

// requireUnlocked writes id into scratch.writes within 2 s, as a server that a dump left unlocked
// allows.
func (env *backupEnv) requireUnlocked(t *testing.T, id int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := env.source.root.ExecContext(ctx, "INSERT INTO scratch.writes VALUES (?)", id); err != nil {
		t.Errorf("a write after the dump: %v (is the server still locked?)", err)
	}
}

// lockOnLaterAttempt: a table lock held longer than one attempt for the global read lock, and
// released within the lock timeout, makes the dump ask again on a new session; the dump then
// completes and leaves the server unlocked.
func (env *backupEnv) lockOnLaterAttempt(t *testing.T) {
	ctx := context.Background()
	locker := env.lockScratchTable(t)
	released := make(chan error, 1)
	go func() {
		time.Sleep(lockAttempt + time.Second)
		_, err := locker.ExecContext(ctx, "UNLOCK TABLES")
		released <- err
	}()
	if _, err := Dump(ctx, DumpOptions{Target: env.s3.target("busy/later"), Credentials: env.s3.credentials(),
		Connection: env.source.backupConnection(), LockTimeout: 30 * time.Second}); err != nil {
		t.Errorf("dump once the table lock is released: %v", err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	env.requireUnlocked(t, 4)
}

// transactionBetweenWrites: a transaction that has written, and writes again and commits after the
// dump has asked for the global read lock, neither fails nor keeps the dump from locking.
func (env *backupEnv) transactionBetweenWrites(t *testing.T) {
	ctx := context.Background()
	env.source.exec(t, "CREATE DATABASE IF NOT EXISTS scratch", "CREATE TABLE IF NOT EXISTS scratch.pairs (id INT PRIMARY KEY, n INT)",
		"REPLACE INTO scratch.pairs VALUES (1, 0), (2, 0)")
	tx, err := env.source.root.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE scratch.pairs SET n = n + 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	committed := make(chan error, 1)
	go func() {
		time.Sleep(500 * time.Millisecond) // the dump has asked for the lock by now
		if _, err := tx.ExecContext(ctx, "UPDATE scratch.pairs SET n = n - 1 WHERE id = 2"); err != nil {
			committed <- err
			return
		}
		committed <- tx.Commit()
	}()
	start := time.Now()
	_, err = Dump(ctx, DumpOptions{Target: env.s3.target("busy/pairs"), Credentials: env.s3.credentials(),
		Connection: env.source.backupConnection(), LockTimeout: 20 * time.Second})
	if err != nil {
		t.Errorf("dump beside a transaction between two writes: %v", err)
	}
	if err := <-committed; err != nil {
		t.Errorf("the transaction: %v", err)
	}
	t.Logf("the dump took %s", time.Since(start).Round(time.Millisecond))
}
