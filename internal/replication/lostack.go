package replication

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AckLostAfter is how long a commit of the primary must have waited for an acknowledgement that a
// replica already holds before the acknowledgement is taken as lost: far beyond a network's delay,
// and short beside a failover's.
const AckLostAfter = 5 * time.Second

// ReleaseLostAcks ends the sessions of the primary that have waited at least AckLostAfter for a
// replica's acknowledgement, when its binary log still ends at stuckAt, where it ended when the
// caller saw them wait, and a replica of it has received everything up to there. It returns how
// many it ended.
//
// A replica acknowledges what it receives on its connection to the primary. When that connection
// breaks after the replica received a commit and before the primary read the acknowledgement (the
// primary hung for longer than slave_net_timeout, say), the replica reconnects from the position
// it holds, and MariaDB credits it with no acknowledgement for what came before: the commit waits
// for good, with durability Required, and every later commit queues behind it, so that the binary
// log ends where it did. Nothing can be lost by ending it: a replica holds everything the primary
// logged, read after the waiting sessions. The group the waiting session led commits, its other
// sessions are told so, the ended session's client is left in doubt, and the commits queued behind
// it go on, acknowledged as usual.
func ReleaseLostAcks(ctx context.Context, primary Member, replicas []Member, stuckAt Position) (int, error) {
	waiting, err := longWaits(ctx, primary.DB, "")
	if err != nil || len(waiting) == 0 {
		return 0, err
	}
	now, err := Observe(ctx, primary.DB)
	if err != nil || !now.Binlog.Equal(stuckAt) || !ReceivedAll(ObserveAll(ctx, replicas), primary, now.Binlog) {
		return 0, err
	}
	ended := 0
	for _, id := range waiting {
		// A session that moved on since the list began a new statement, whose commit no replica
		// may hold yet: only one that still waits, as long, is ended.
		still, err := longWaits(ctx, primary.DB, fmt.Sprintf(" AND ID = %d", id))
		if err != nil {
			return ended, err
		}
		if len(still) == 0 {
			continue
		}
		if err := kill(ctx, primary.DB, still); err != nil {
			return ended, err
		}
		ended++
	}
	return ended, nil
}

// longWaits lists the sessions that have waited for an acknowledgement at least AckLostAfter,
// with more conditions if given.
func longWaits(ctx context.Context, db *sql.DB, and string) ([]int64, error) {
	rows, err := db.QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE STATE = ? AND TIME_MS >= ?"+and,
		ackWaitState, AckLostAfter.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("list the sessions that wait for an acknowledgement: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, errors.Join(rows.Err(), rows.Close())
}

// ReceivedAll tells whether a replica that receives from primary, as views saw it, has received
// everything up to logged.
func ReceivedAll(views []View, primary Member, logged Position) bool {
	for _, v := range views {
		rs := v.Observation.Replica
		if v.Name != primary.Name && v.Err == nil && rs != nil && rs.SourceHost == primary.Source.Host && rs.Received.Covers(logged) {
			return true
		}
	}
	return false
}
