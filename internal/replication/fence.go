package replication

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// ackWaitState is what MariaDB shows as the state of a session that waits for a replica to
// acknowledge a commit.
const ackWaitState = "Waiting for semi-sync ACK from slave"

// Fence closes a member that may still take writes while another is primary: the sessions of
// clients are killed first, so that a transaction waiting for a replica's acknowledgement that
// will never come is not reported done to its client, then the member turns read-only, which
// waits for such transactions: a deadline on ctx bounds that wait.
func Fence(ctx context.Context, db *sql.DB, keep ...string) error {
	if err := killClients(ctx, db, keep); err != nil {
		return err
	}
	return exec(ctx, db, "SET GLOBAL read_only = ON")
}

// killClients ends every session but the server's own threads, replication's and those of keep,
// and those that wait for an acknowledgement last.
//
// MariaDB commits transactions in groups, and only the group's leader waits for the
// acknowledgement (after the binary log is synced), on behalf of the whole group. A leader
// killed stops waiting and the whole group commits: a session of the group that still lived
// would be told that its write is done, a write no replica holds. A killed session is told
// nothing. So the sessions that do not wait are killed first, and listed again until none is
// left: a group's other sessions exist before its leader starts waiting, and none joins it after.
// Only then are the waiting leaders killed. ctx bounds the whole, should clients keep coming.
func killClients(ctx context.Context, db *sql.DB, keep []string) error {
	for {
		sessions, err := listClients(ctx, db, keep)
		if err != nil {
			return err
		}
		if len(sessions) == 0 {
			return nil
		}
		var waiting, others []int64
		for _, s := range sessions {
			if s.state == ackWaitState {
				waiting = append(waiting, s.id)
			} else {
				others = append(others, s.id)
			}
		}
		if len(others) == 0 {
			others = waiting
		}
		if err := kill(ctx, db, others); err != nil {
			return err
		}
	}
}

type session struct {
	id    int64
	state string
}

// listClients lists the live sessions of clients: not the server's own threads, replication's,
// those of keep, nor those killed already, which a waiting commit may hold for a while.
func listClients(ctx context.Context, db *sql.DB, keep []string) ([]session, error) {
	query := "SELECT ID, COALESCE(STATE, '') FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() " +
		"AND COMMAND NOT IN ('Daemon', 'Binlog Dump', 'Slave_IO', 'Slave_SQL', 'Slave_worker', 'Killed') " +
		"AND USER NOT IN ('system user', 'event_scheduler', 'unauthenticated user', ''"
	args := []any{}
	for _, user := range keep {
		query += ", ?"
		args = append(args, user)
	}
	rows, err := db.QueryContext(ctx, query+")", args...)
	if err != nil {
		return nil, fmt.Errorf("list client sessions: %w", err)
	}
	var sessions []session
	for rows.Next() {
		var s session
		if err := rows.Scan(&s.id, &s.state); err != nil {
			_ = rows.Close()
			return nil, err
		}
		sessions = append(sessions, s)
	}
	return sessions, errors.Join(rows.Err(), rows.Close())
}

func kill(ctx context.Context, db *sql.DB, ids []int64) error {
	for _, id := range ids {
		// A session that ended meanwhile is no error.
		if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil && !isUnknownThread(err) {
			return fmt.Errorf("kill session %d: %w", id, err)
		}
	}
	return nil
}

// isUnknownThread tells whether err is MariaDB's "Unknown thread id" (1094).
func isUnknownThread(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1094
}
