package backup

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A dump of a replica first waits until the replica applied every transaction its primary held
// when the dump began, so that the backup holds every write acknowledged before it, also when it
// has become the primary meanwhile; a replica that does not catch up in time fails the backup,
// which then stores nothing.
func TestADumpOfAReplicaHoldsWhatItsPrimaryHeld(t *testing.T) {
	ctx := context.Background()
	primary := startMariaDB(t, "--log-bin=binlog", "--server-id=7", "--gtid-strict-mode")
	replica := startMariaDB(t, "--log-bin=binlog", "--server-id=8", "--gtid-strict-mode", "--read-only")
	var position string
	if err := primary.root.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&position); err != nil {
		t.Fatal(err)
	}
	// The replica starts from what the primary holds now: each server made its own accounts.
	replica.exec(t, "SET GLOBAL gtid_slave_pos = '"+position+"'",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_PASSWORD='%s', MASTER_USE_GTID=slave_pos",
			primary.port, rootPassword),
		"START SLAVE")
	primary.exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.orders (id INT PRIMARY KEY)", "INSERT INTO shop.orders VALUES (1), (2), (3)")
	o := DumpOptions{Target: Target{Volume: t.TempDir(), Key: "ns/db/from-replica"}, Connection: replica.backupConnection(),
		CatchUpHost: fmt.Sprintf("127.0.0.1:%d", primary.port)}
	res, err := Dump(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tables != 1 {
		t.Fatalf("the dump of the replica holds %d tables, want the primary's 1: %+v", res.Tables, res)
	}

	replica.exec(t, "STOP SLAVE")
	primary.exec(t, "INSERT INTO shop.orders VALUES (4)")
	o.Target.Key, o.CatchUpTimeout = "ns/db/behind", time.Second
	_, err = Dump(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "did not apply the transactions of its primary") {
		t.Fatalf("a dump of a replica that does not catch up: %v", err)
	}
	left, err := filepath.Glob(filepath.Join(o.Target.Volume, "ns", "db", "behind*"))
	if err != nil || len(left) != 0 {
		t.Errorf("a failed dump left %v (%v)", left, err)
	}

	// The replica becomes the primary the catch-up host reaches, and takes writes of its own:
	// the dump does not wait for a replication that no longer runs.
	replica.exec(t, "SET GLOBAL read_only = OFF", "INSERT INTO shop.orders VALUES (10)")
	promoted := o
	promoted.Target.Key, promoted.CatchUpHost, promoted.CatchUpTimeout = "ns/db/promoted", fmt.Sprintf("127.0.0.1:%d", replica.port), 5*time.Second
	if res, err := Dump(ctx, promoted); err != nil || res.Tables != 1 {
		t.Fatalf("a dump of a replica that became the primary: %+v, %v", res, err)
	}
}
