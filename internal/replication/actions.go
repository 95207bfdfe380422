package replication

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Source is the primary a replica receives from, and the account it logs in with.
type Source struct {
	Host     string
	Port     int
	User     string
	Password string
}

// Durability is how long a primary's commit waits for a replica to acknowledge it.
type Durability struct {
	// AckTimeout is how long a commit waits for an acknowledgement before the primary stops
	// waiting and replicates without one; zero means it never stops waiting, so that no commit
	// returns before a replica holds it.
	AckTimeout time.Duration
}

// neverTimeout is the largest rpl_semi_sync_master_timeout, in milliseconds: about 49 days.
const neverTimeout = 1<<32 - 1

func (d Durability) timeoutMillis() int64 {
	if d.AckTimeout <= 0 {
		return neverTimeout
	}
	return max(d.AckTimeout.Milliseconds(), 1)
}

// exec runs statements one after the other on one session.
func exec(ctx context.Context, db *sql.DB, statements ...string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, s := range statements {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", redact(s), err)
		}
	}
	return nil
}

// redact hides a password in a statement named by an error.
func redact(statement string) string {
	if i := strings.Index(statement, "MASTER_PASSWORD="); i >= 0 {
		end := strings.Index(statement[i:], ", ")
		if end < 0 {
			end = len(statement) - i
		}
		return statement[:i] + "MASTER_PASSWORD=<hidden>" + statement[i+end:]
	}
	return statement
}

// quote makes a SQL string literal: CHANGE MASTER takes no placeholders.
func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`).Replace(s) + "'"
}

// Follow makes the member a read-only replica of source, receiving from where its own applied
// position ends. A member that already receives from source is left as it is.
func Follow(ctx context.Context, db *sql.DB, o Observation, source Source) error {
	if err := exec(ctx, db, "SET GLOBAL read_only = ON", "SET GLOBAL rpl_semi_sync_master_enabled = OFF"); err != nil {
		return err
	}
	if r := o.Replica; r != nil && r.SourceHost == source.Host && r.SourcePort == source.Port && r.Receiving != "No" && r.Applying {
		return nil
	}
	// A former primary resumes after what it wrote itself, not after what it last applied as a
	// replica, which the new source's binary log may no longer hold: MASTER_DEMOTE_TO_SLAVE adds
	// its own binary log's position to the replication position.
	demote := ""
	if !o.Applied.Covers(o.Binlog) {
		demote = ", MASTER_DEMOTE_TO_SLAVE=1"
	}
	return exec(ctx, db, "STOP SLAVE",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST=%s, MASTER_PORT=%d, MASTER_USER=%s, MASTER_PASSWORD=%s, "+
			"MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1, MASTER_HEARTBEAT_PERIOD=1%s",
			quote(source.Host), source.Port, quote(source.User), quote(source.Password), demote),
		"START SLAVE")
}

// StopReceiving stops the member's replication from receiving, so that it acknowledges nothing
// more: once no replica acknowledges, a primary that waits for acknowledgements commits nothing
// more either. What it received is still applied.
func StopReceiving(ctx context.Context, db *sql.DB) error {
	return exec(ctx, db, "STOP SLAVE IO_THREAD")
}

// ErrNotCaughtUp says that a member did not apply what it had received within the time given.
var ErrNotCaughtUp = errors.New("the member did not apply what it received in time")

// CatchUp waits until the member has applied every transaction of position, or timeout passes.
func CatchUp(ctx context.Context, db *sql.DB, position Position, timeout time.Duration) error {
	if len(position) == 0 {
		return nil
	}
	var result sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", position.String(), timeout.Seconds()).Scan(&result); err != nil {
		return fmt.Errorf("wait for %s: %w", position, err)
	}
	if !result.Valid || result.Int64 != 0 {
		return fmt.Errorf("%w: %s within %s", ErrNotCaughtUp, position, timeout)
	}
	return nil
}

// OpenWrites makes the member the writable primary: it applies what it had received, stops
// replicating, waits for acknowledgements as durability says, and only then takes writes.
// withReplicas says whether any replica will acknowledge: a lone member waits for none.
func OpenWrites(ctx context.Context, db *sql.DB, o Observation, d Durability, withReplicas bool, catchUp time.Duration) error {
	if o.Replica != nil {
		if err := CatchUp(ctx, db, o.Replica.Received, catchUp); err != nil {
			return err
		}
	}
	semiSync := "OFF"
	if withReplicas {
		semiSync = "ON"
	}
	return exec(ctx, db, "STOP ALL SLAVES", "RESET SLAVE ALL",
		"SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC",
		"SET GLOBAL rpl_semi_sync_master_wait_no_slave = ON",
		fmt.Sprintf("SET GLOBAL rpl_semi_sync_master_timeout = %d", d.timeoutMillis()),
		"SET GLOBAL rpl_semi_sync_master_enabled = "+semiSync,
		"SET GLOBAL read_only = OFF")
}

// Demote closes a primary to writes: it turns read-only and the sessions of clients, which might
// otherwise hold a transaction open, are killed. The accounts in keep are the operator's own.
func Demote(ctx context.Context, db *sql.DB, keep ...string) error {
	if err := exec(ctx, db, "SET GLOBAL read_only = ON"); err != nil {
		return err
	}
	return killClients(ctx, db, keep)
}
