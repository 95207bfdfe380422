package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"k8s.io/apimachinery/pkg/util/wait"
)

// systemDatabases are the server's own: a restore starts a new server with its own, and the
// accounts in mysql are the new MySQL's.
var systemDatabases = []string{"mysql", "information_schema", "performance_schema", "sys"}

// snapshot is a transaction on one connection that sees the same instant as mysqldump's: both
// began under a global read lock, which no write can pass, and the lock was released once both
// had begun. Writers are held only for that moment, not for the dump. Like mysqldump's
// --single-transaction, this holds for transactional tables (InnoDB): a MyISAM or Aria table
// written during the dump may be read at different moments by the dump and the checksums.
type snapshot struct {
	conn           *sql.Conn
	databases      []string
	serverVersion  string
	binlogPosition string
	// gtidPosition is MariaDB's @@gtid_binlog_pos at the snapshot: the transactions it holds,
	// where a replay of the binary log begins. Empty on MySQL.
	gtidPosition string
}

// snapshotTimeouts bound the waits under the lock, while writers wait too.
type snapshotTimeouts struct {
	// lock bounds the wait for the global read lock, which waits for running statements to end
	// (and stalls writers meanwhile): a long query fails the backup rather than the application.
	lock time.Duration
	// dumpStart bounds the wait for mysqldump's transaction to begin.
	dumpStart time.Duration
	// longStatement is how long a statement may have been running when the lock is asked for.
	longStatement time.Duration
}

// takeSnapshot locks the server, begins the snapshot, starts the dump with start and waits for
// its transaction, then unlocks. On error, nothing stays locked and the dump is aborted (whoever
// reads its output still waits for it). The dump is nil when the server has no database of its
// own.
func takeSnapshot(ctx context.Context, db *sql.DB, c Connection, timeouts snapshotTimeouts,
	start func(databases []string) (*dumpProcess, error),
) (_ *snapshot, _ *dumpProcess, err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, c.describe(err)
	}
	s := &snapshot{conn: conn}
	var dump *dumpProcess
	defer func() {
		if err != nil {
			if dump != nil {
				dump.abort()
			}
			s.close()
		}
	}()
	if err := waitForLongStatements(ctx, conn, timeouts.longStatement, timeouts.lock); err != nil {
		return nil, nil, err
	}
	if err := s.lockWithin(ctx, db, timeouts.lock); err != nil {
		return nil, nil, c.describe(err)
	}
	if err := s.begin(ctx); err != nil {
		return nil, nil, c.describe(err)
	}
	// A server with no database of its own leaves mysqldump nothing to do: no dump is started.
	if len(s.databases) > 0 {
		before, err := s.sessionsOf(ctx, c.User)
		if err != nil {
			return nil, nil, c.describe(err)
		}
		if dump, err = start(s.databases); err != nil {
			return nil, nil, err
		}
		if err := s.waitForDumpTransaction(ctx, c.User, before, dump, timeouts.dumpStart); err != nil {
			return nil, nil, err
		}
	}
	// The session that holds the lock: a lock granted on a later attempt is on a new one.
	if _, err := s.conn.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		return nil, nil, c.describe(err)
	}
	return s, dump, nil
}

// waitForLongStatements waits, up to timeout, until no statement has been running for longer
// than long. The global read lock flushes the tables: every later query on a table that a
// running statement uses, a read as much as a write, waits until that statement ends, even once
// the lock is released. A report or a batch running for minutes would stall the application for
// as long, so the dump waits for it to end, or gives up.
func waitForLongStatements(ctx context.Context, conn *sql.Conn, long, timeout time.Duration) error {
	var id, seconds int64
	var info string
	// The query runs on ctx: one in flight at the deadline still names the statement.
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		err := conn.QueryRowContext(ctx, `SELECT ID, TIME, LEFT(COALESCE(INFO, ''), 100)
			FROM information_schema.PROCESSLIST
			WHERE ID <> CONNECTION_ID() AND INFO IS NOT NULL AND TIME >= ?
			AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump', 'Binlog Dump GTID', 'Killed')
			AND USER NOT IN ('system user', 'event_scheduler')
			ORDER BY TIME DESC LIMIT 1`, int64(long/time.Second)).Scan(&id, &seconds, &info)
		if errors.Is(err, sql.ErrNoRows) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("cannot list the running statements: %w", err)
		}
		return false, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("statement %d has been running for %ds (%q): the global read lock would stall every query on its tables until it ends, so the backup gives up",
			id, seconds, info)
	}
	return err
}

// lockAttempt bounds one request for the global read lock. A write transaction caught between two
// of its statements when the request comes can neither commit (its next statement waits behind
// the request) nor be waited for (the request waits for it to commit): only the timeout ends that,
// and every write waits meanwhile. Short attempts, each on a new session, keep the stall short and
// let such a transaction finish between them.
const lockAttempt = 2 * time.Second

// lockNotGranted is a request for the global read lock that was stopped: its session cannot be
// trusted with a lock any more.
type lockNotGranted struct{ cause error }

func (e lockNotGranted) Error() string {
	return "the global read lock was not granted: " + e.cause.Error()
}
func (e lockNotGranted) Unwrap() error { return e.cause }

// lockWithin takes the global read lock in attempts of at most lockAttempt, until timeout.
func (s *snapshot) lockWithin(ctx context.Context, db *sql.DB, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := s.lock(ctx, db, min(lockAttempt, time.Until(deadline)))
		var notGranted lockNotGranted
		if !errors.As(err, &notGranted) {
			return err
		}
		if time.Until(deadline) <= 0 {
			return fmt.Errorf("the global read lock was not granted within %s: a long statement or a lock holds the tables, and writes wait meanwhile (%w)",
				timeout, notGranted.cause)
		}
		// The session was told to stop: it is closed rather than trusted, even if the lock came
		// at the last moment.
		s.close()
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		s.conn = conn
	}
}

// lock takes the global read lock within timeout. While FLUSH TABLES WITH READ LOCK waits (for
// a session's LOCK TABLES, a running write, or statements to close their tables) every write
// waits behind it, so it must give up quickly. The statement is killed from another session
// once timeout has passed; lock_wait_timeout, a little longer, is the server's own backstop,
// though it bounds the metadata locks only.
func (s *snapshot) lock(ctx context.Context, db *sql.DB, timeout time.Duration) error {
	seconds := int(timeout/time.Second) + 5
	for _, statement := range []string{
		"SET SESSION lock_wait_timeout = " + strconv.Itoa(seconds),
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
	} {
		if _, err := s.conn.ExecContext(ctx, statement); err != nil {
			return err
		}
	}
	var id int64
	if err := s.conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		return err
	}
	killed := make(chan error, 1)
	timer := time.AfterFunc(timeout, func() {
		killCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		// Anyone may kill their own statements: no privilege is needed.
		_, err := db.ExecContext(killCtx, "KILL QUERY "+strconv.FormatInt(id, 10))
		killed <- err
	})
	_, err := s.conn.ExecContext(ctx, "FLUSH TABLES WITH READ LOCK")
	timedOut := !timer.Stop()
	var myErr *mysql.MySQLError
	if timedOut || (errors.As(err, &myErr) && myErr.Number == erLockWaitTimeout) {
		if err == nil {
			err = errors.New("granted only as it was stopped")
		}
		if timedOut {
			if killErr := <-killed; killErr != nil {
				err = fmt.Errorf("%w; stopping it failed: %w", err, killErr)
			}
		}
		return lockNotGranted{cause: err}
	}
	return err
}

// begin lists the databases and begins the transaction, under the lock, then reads where the
// binary log and the server stand at that instant.
func (s *snapshot) begin(ctx context.Context) error {
	placeholders := strings.TrimSuffix(strings.Repeat("?, ", len(systemDatabases)), ", ")
	args := make([]any, len(systemDatabases))
	for i, name := range systemDatabases {
		args[i] = name
	}
	rows, err := s.conn.QueryContext(ctx, `SELECT SCHEMA_NAME FROM information_schema.SCHEMATA
		WHERE SCHEMA_NAME NOT IN (`+placeholders+`) ORDER BY SCHEMA_NAME`, args...)
	if err != nil {
		return err
	}
	if s.databases, err = scanStrings(rows); err != nil {
		return err
	}
	if _, err := s.conn.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return err
	}
	if s.binlogPosition, err = binlogPosition(ctx, s.conn); err != nil {
		return err
	}
	if s.gtidPosition, err = gtidBinlogPosition(ctx, s.conn); err != nil {
		return err
	}
	return s.conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&s.serverVersion)
}

// binlogPosition is "file:position", or empty when the server keeps no binary log. MySQL 8.4
// knows only SHOW BINARY LOG STATUS, MariaDB and older MySQL only SHOW MASTER STATUS.
func binlogPosition(ctx context.Context, conn *sql.Conn) (string, error) {
	rows, err := conn.QueryContext(ctx, "SHOW BINARY LOG STATUS")
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) && myErr.Number == erParseError {
		rows, err = conn.QueryContext(ctx, "SHOW MASTER STATUS")
	}
	if err != nil {
		return "", err
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		return "", err
	}
	if !rows.Next() {
		return "", rows.Err()
	}
	values := make([]sql.NullString, len(columns))
	pointers := make([]any, len(columns))
	for i := range values {
		pointers[i] = &values[i]
	}
	if err := rows.Scan(pointers...); err != nil {
		return "", err
	}
	var file, position string
	for i, column := range columns {
		switch strings.ToLower(column) {
		case "file":
			file = values[i].String
		case "position":
			position = values[i].String
		}
	}
	if file == "" {
		return "", nil
	}
	return file + ":" + position, nil
}

// sessionsOf returns the ids of user's sessions other than this one.
func (s *snapshot) sessionsOf(ctx context.Context, user string) (map[int64]bool, error) {
	rows, err := s.conn.QueryContext(ctx,
		"SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ? AND ID <> CONNECTION_ID()", user)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids[id] = true
	}
	return ids, rows.Err()
}

// trxPollInterval paces the polls of INNODB_TRX. InnoDB refreshes that table's cache only when
// it was not read for 100 ms: polling faster would read the same stale rows forever.
const trxPollInterval = 120 * time.Millisecond

// waitForDumpTransaction waits until a new session of user holds an InnoDB transaction and is
// no longer running START TRANSACTION: only then is its read view open, so releasing the lock
// lets no write in between the two snapshots. A mysqldump that already finished under the lock
// (a small dump is fast) read nothing but that instant too.
func (s *snapshot) waitForDumpTransaction(ctx context.Context, user string, before map[int64]bool,
	dump *dumpProcess, timeout time.Duration,
) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-dump.exited():
			return dump.wait()
		default:
		}
		found, err := s.dumpTransactionBegan(ctx, user, before)
		if err != nil || found {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mysqldump's transaction did not begin within %s", timeout)
		}
		select {
		case <-dump.exited():
			return dump.wait()
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(trxPollInterval):
		}
	}
}

func (s *snapshot) dumpTransactionBegan(ctx context.Context, user string, before map[int64]bool) (bool, error) {
	rows, err := s.conn.QueryContext(ctx, `SELECT p.ID, COALESCE(p.INFO, '')
		FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
		WHERE p.USER = ? AND p.ID <> CONNECTION_ID()`, user)
	if err != nil {
		return false, fmt.Errorf("cannot watch for mysqldump's transaction: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var info string
		if err := rows.Scan(&id, &info); err != nil {
			return false, err
		}
		if !before[id] && !strings.Contains(strings.ToUpper(info), "CONSISTENT SNAPSHOT") {
			return true, rows.Err()
		}
	}
	return false, rows.Err()
}

// close ends the transaction and the connection, which releases the lock if it is still held:
// the pool keeps no idle connection, so closing it ends the session.
func (s *snapshot) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = s.conn.ExecContext(ctx, "ROLLBACK")
	_, _ = s.conn.ExecContext(ctx, "UNLOCK TABLES")
	_ = s.conn.Close()
}

func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// gtidBinlogPosition is MariaDB's @@gtid_binlog_pos, empty on a server that does not know it.
func gtidBinlogPosition(ctx context.Context, conn *sql.Conn) (string, error) {
	var position sql.NullString
	err := conn.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&position)
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) && myErr.Number == erUnknownSystemVariable {
		return "", nil
	}
	return position.String, err
}
