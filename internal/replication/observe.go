package replication

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// Domain is the replication domain every member writes in: the operator never sets another
// gtid_domain_id, so one sequence orders the whole history.
const Domain = 0

// Observation is what one member's server says of itself.
type Observation struct {
	ServerID uint32
	ReadOnly bool
	// Binlog is gtid_binlog_pos: the last transaction in the member's own binary log, written by
	// its clients or, with log_slave_updates, by its replication.
	Binlog Position
	// Applied is gtid_slave_pos: the last transaction replication applied.
	Applied Position
	// SemiSyncSource tells whether the member waits for a replica's acknowledgement before a
	// commit returns (rpl_semi_sync_master_enabled), and SemiSyncActive whether it does now, as
	// opposed to having fallen back after a timeout.
	SemiSyncSource, SemiSyncActive bool
	// SemiSyncReplicas is the number of replicas connected that acknowledge, and SemiSyncWaiting
	// the number of sessions whose commit waits for an acknowledgement.
	SemiSyncReplicas, SemiSyncWaiting int
	// Replica is the member's replication from a source, or nil when it has none configured.
	Replica *ReplicaStatus
}

// ReplicaStatus is what SHOW SLAVE STATUS reports of the member's replication.
type ReplicaStatus struct {
	SourceHost string
	SourcePort int
	// Receiving is Slave_IO_Running: "Yes", "Connecting" or "No".
	Receiving string
	// Applying is Slave_SQL_Running.
	Applying bool
	// Received is Gtid_IO_Pos: the last transaction written to the relay log, which is what the
	// member acknowledged to its source.
	Received Position
	// SecondsBehind is Seconds_Behind_Master, or -1 when the server reports none.
	SecondsBehind int64
	IOErrno       int
	IOError       string
	SQLErrno      int
	SQLError      string
}

// Observe reads the member's replication state in one session.
func Observe(ctx context.Context, db *sql.DB) (Observation, error) {
	var o Observation
	conn, err := db.Conn(ctx)
	if err != nil {
		return o, err
	}
	defer conn.Close()
	var binlog, applied string
	var readOnly, semiSync int
	if err := conn.QueryRowContext(ctx,
		"SELECT @@server_id, @@read_only, @@gtid_binlog_pos, @@gtid_slave_pos, @@rpl_semi_sync_master_enabled").
		Scan(&o.ServerID, &readOnly, &binlog, &applied, &semiSync); err != nil {
		return o, fmt.Errorf("read the server's variables: %w", err)
	}
	o.ReadOnly, o.SemiSyncSource = readOnly != 0, semiSync != 0
	if o.Binlog, err = ParsePosition(binlog); err != nil {
		return o, fmt.Errorf("gtid_binlog_pos: %w", err)
	}
	if o.Applied, err = ParsePosition(applied); err != nil {
		return o, fmt.Errorf("gtid_slave_pos: %w", err)
	}
	status, err := showStatus(ctx, conn, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_status', 'Rpl_semi_sync_master_clients', 'Rpl_semi_sync_master_wait_sessions')")
	if err != nil {
		return o, err
	}
	o.SemiSyncActive = status["Rpl_semi_sync_master_status"] == "ON"
	o.SemiSyncReplicas, _ = strconv.Atoi(status["Rpl_semi_sync_master_clients"])
	o.SemiSyncWaiting, _ = strconv.Atoi(status["Rpl_semi_sync_master_wait_sessions"])
	o.Replica, err = replicaStatus(ctx, conn)
	return o, err
}

// showStatus reads the two-column rows of a SHOW statement into a map.
func showStatus(ctx context.Context, conn *sql.Conn, query string) (map[string]string, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	defer rows.Close()
	values := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		values[name] = value
	}
	return values, rows.Err()
}

// replicaStatus reads SHOW SLAVE STATUS by column name, since its columns change between
// releases; nil means the member replicates from no source.
func replicaStatus(ctx context.Context, conn *sql.Conn) (*ReplicaStatus, error) {
	rows, err := conn.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return nil, fmt.Errorf("SHOW SLAVE STATUS: %w", err)
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	raw := make([]sql.NullString, len(columns))
	dest := make([]any, len(columns))
	for i := range raw {
		dest[i] = &raw[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	col := map[string]string{}
	for i, name := range columns {
		col[name] = raw[i].String
	}
	if col["Master_Host"] == "" {
		return nil, nil
	}
	s := &ReplicaStatus{
		SourceHost: col["Master_Host"],
		Receiving:  col["Slave_IO_Running"],
		Applying:   col["Slave_SQL_Running"] == "Yes",
		IOError:    col["Last_IO_Error"],
		SQLError:   col["Last_SQL_Error"],
	}
	s.SourcePort, _ = strconv.Atoi(col["Master_Port"])
	s.IOErrno, _ = strconv.Atoi(col["Last_IO_Errno"])
	s.SQLErrno, _ = strconv.Atoi(col["Last_SQL_Errno"])
	s.SecondsBehind = -1
	if behind, err := strconv.ParseInt(col["Seconds_Behind_Master"], 10, 64); err == nil {
		s.SecondsBehind = behind
	}
	if s.Received, err = ParsePosition(col["Gtid_IO_Pos"]); err != nil {
		return nil, fmt.Errorf("Gtid_IO_Pos: %w", err)
	}
	return s, rows.Err()
}
