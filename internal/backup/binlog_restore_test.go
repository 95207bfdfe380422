package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/internal/binlog"
)

// A server's binary log, shipped as it grows, restores with a base backup to any second after
// the backup, or to a transaction's GTID: every row acknowledged before the target is there,
// none written after it.
func TestPointInTimeRestore(t *testing.T) {
	ctx := context.Background()
	primary := startMariaDB(t, clusterArgs(7)...)
	primary.exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))")
	volume := t.TempDir()
	store := archiveStore{target: Target{Volume: volume}}
	shipInBackground(t, primary, store, "ns/db/binlog")
	w := startWriter(t, primary)
	w.writeFor(1200 * time.Millisecond)
	if _, err := Dump(ctx, DumpOptions{Target: Target{Volume: volume, Key: "ns/db/base"}, Connection: primary.backupConnection(), BinlogArchive: "ns/db/binlog"}); err != nil {
		t.Fatal(err)
	}
	w.writeFor(3 * time.Second)
	dropSent := time.Now()
	primary.exec(t, "DROP TABLE shop.orders")
	waitShipped(t, primary, store, "ns/db/binlog")

	t.Run("to one second before the drop", func(t *testing.T) {
		target := dropSent.Truncate(time.Second).Add(-time.Second)
		ids, res := restoreTo(t, store, "ns/db/base", ReplayOptions{UntilTime: target})
		if ids == nil {
			t.Fatalf("the table is missing after a restore to %s, before its drop", target)
		}
		var kept, excluded int
		for _, r := range w.rows {
			switch {
			case r.acked.Before(target) && !ids[r.id]:
				t.Errorf("row %d, acknowledged at %s, is missing after a restore to %s", r.id, r.acked.Format(time.RFC3339Nano), target)
			case !r.sent.Before(target) && ids[r.id]:
				t.Errorf("row %d, sent at %s, is there after a restore to %s", r.id, r.sent.Format(time.RFC3339Nano), target)
			case !r.sent.Before(target):
				excluded++
			default:
				kept++
			}
		}
		if excluded == 0 || res.Replayed == 0 {
			t.Errorf("the restore kept %d rows, left out %d and replayed %d transactions: the target does not split the writes", kept, excluded, res.Replayed)
		}
		t.Logf("restored to %s: %d rows kept, %d written after it left out, %d transactions replayed; window %s", target.Format(time.RFC3339), kept, excluded, res.Replayed, res.Window)
	})

	t.Run("to a GTID", func(t *testing.T) {
		middle := w.rows[len(w.rows)*3/4]
		ids, res := restoreTo(t, store, "ns/db/base", ReplayOptions{UntilGTID: middle.gtid.String()})
		for _, r := range w.rows {
			if want := r.id <= middle.id; ids[r.id] != want {
				t.Errorf("row %d (GTID %s) present %v after a restore to GTID %s, want %v", r.id, r.gtid, ids[r.id], middle.gtid, want)
			}
		}
		if res.ReplayedThrough != middle.gtid.String() {
			t.Errorf("the replay says it went through %q, want %s", res.ReplayedThrough, middle.gtid)
		}
	})

	refused := func(t *testing.T, o ReplayOptions, want string) {
		t.Helper()
		o.Target, o.Archive, o.Out = Target{Volume: volume, Key: "ns/db/base"}, "ns/db/binlog", filepath.Join(t.TempDir(), "replay.sql")
		_, err := Replay(ctx, o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("replay to %v %q: %v, want an error saying %q", o.UntilTime, o.UntilGTID, err, want)
		}
		if _, statErr := os.Stat(o.Out); statErr == nil {
			t.Errorf("a refused replay wrote %s", o.Out)
		}
		t.Logf("refused: %v", err)
	}
	t.Run("a target before the base backup", func(t *testing.T) {
		refused(t, ReplayOptions{UntilTime: w.rows[0].sent.Add(-time.Minute)}, "outside the recoverable window")
	})
	t.Run("a target after the last archived write", func(t *testing.T) {
		refused(t, ReplayOptions{UntilTime: time.Now().Add(time.Hour)}, "outside the recoverable window")
	})
	t.Run("a GTID of another server", func(t *testing.T) {
		g := w.rows[len(w.rows)-1].gtid
		g.ServerID++
		refused(t, ReplayOptions{UntilGTID: g.String()}, "not "+g.String())
	})
	t.Run("an unparseable GTID", func(t *testing.T) {
		refused(t, ReplayOptions{UntilGTID: "yesterday"}, "is not a GTID")
	})
	t.Run("a backup taken without the archive", func(t *testing.T) {
		if _, err := Dump(ctx, DumpOptions{Target: Target{Volume: volume, Key: "ns/db/plain"}, Connection: primary.backupConnection()}); err != nil {
			t.Fatal(err)
		}
		_, err := Replay(ctx, ReplayOptions{Target: Target{Volume: volume, Key: "ns/db/plain"}, UntilGTID: w.rows[0].gtid.String(),
			Out: filepath.Join(t.TempDir(), "replay.sql")})
		if err == nil || !strings.Contains(err.Error(), "names no binary log archive") {
			t.Fatalf("a replay after a backup that names no archive: %v", err)
		}
	})
	t.Run("a piece missing from the storage", func(t *testing.T) {
		removeMiddlePiece(t, volume, "ns/db/binlog")
		refused(t, ReplayOptions{UntilTime: dropSent.Truncate(time.Second)}, "outside the recoverable window")
	})
}

// removeMiddlePiece deletes an archived piece that holds transactions and is neither the
// first nor the last.
func removeMiddlePiece(t *testing.T, volume, archive string) {
	t.Helper()
	store, err := newVolumeStorage(volume)
	if err != nil {
		t.Fatal(err)
	}
	pieces, err := listPieces(context.Background(), store, archive)
	if err != nil {
		t.Fatal(err)
	}
	var holding []binlog.Piece
	for _, p := range pieces {
		if p.HasTransactions() {
			holding = append(holding, p)
		}
	}
	if len(holding) < 3 {
		t.Fatalf("the archive has %d pieces with transactions, want 3 or more", len(holding))
	}
	victim := holding[len(holding)/2]
	if err := os.Remove(filepath.Join(volume, archive, victim.Name())); err != nil {
		t.Fatal(err)
	}
}

// A failover inside the window: transactions the old primary shipped but its replica never
// received were lost by the cluster, and a restore leaves them out, while every transaction the
// new primary kept or took is restored.
func TestPointInTimeRestoreAcrossAFailover(t *testing.T) {
	ctx := context.Background()
	a := startMariaDB(t, clusterArgs(1)...)
	b := startMariaDB(t, append(clusterArgs(2), "--read-only")...)
	var position string
	if err := a.root.QueryRow("SELECT @@gtid_binlog_pos").Scan(&position); err != nil {
		t.Fatal(err)
	}
	// b's binary log starts empty and holds only what it replicates, as a copied member's.
	b.exec(t, "RESET MASTER", "SET GLOBAL gtid_slave_pos = '"+position+"'",
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_PASSWORD='%s', MASTER_USE_GTID=slave_pos",
			a.port, rootPassword),
		"START SLAVE")
	a.exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))")
	s3 := startVersityGW(t, nil)
	store := archiveStore{target: s3.target(""), credentials: s3.credentials(), passphrase: "pitr-pässphrase"}
	shipInBackground(t, a, store, "ns/db/binlog")
	shipInBackground(t, b, store, "ns/db/binlog")
	w := startWriter(t, a)
	w.writeFor(time.Second)
	if _, err := Dump(ctx, DumpOptions{Target: store.at("ns/db/base"), Credentials: store.credentials, EncryptionKey: store.passphrase,
		Connection: a.backupConnection(), BinlogArchive: "ns/db/binlog"}); err != nil {
		t.Fatal(err)
	}
	w.writeFor(time.Second)

	// b stops receiving; a commits three more transactions and ships them, then loses its role.
	if err := a.root.QueryRow("SELECT @@gtid_binlog_pos").Scan(&position); err != nil {
		t.Fatal(err)
	}
	b.exec(t, "SELECT MASTER_GTID_WAIT('"+position+"', 30)", "STOP SLAVE")
	var lost []row
	for range 3 {
		lost = append(lost, w.write())
	}
	waitShipped(t, a, store, "ns/db/binlog")
	a.exec(t, "SET GLOBAL read_only = 1")
	b.exec(t, "RESET SLAVE ALL", "SET GLOBAL read_only = 0")

	onB := startWriter(t, b)
	onB.next = w.next
	onB.writeFor(1500 * time.Millisecond)
	waitShipped(t, b, store, "ns/db/binlog")

	last := onB.rows[len(onB.rows)-1]
	ids, res := restoreTo(t, store, "ns/db/base", ReplayOptions{UntilGTID: last.gtid.String()})
	lostIDs := map[int]bool{}
	for _, r := range lost {
		lostIDs[r.id] = true
		if ids[r.id] {
			t.Errorf("row %d, which only the old primary committed (GTID %s), was restored", r.id, r.gtid)
		}
	}
	for _, r := range append(append([]row{}, w.rows...), onB.rows...) {
		if !lostIDs[r.id] && !ids[r.id] {
			t.Errorf("row %d (GTID %s), kept by the cluster, is missing after the restore", r.id, r.gtid)
		}
	}
	t.Logf("restored through %s: %d transactions replayed, %d rows; the %d the cluster lost left out; window %s",
		res.ReplayedThrough, res.Replayed, len(ids), len(lost), res.Window)

	o := ReplayOptions{Target: store.at("ns/db/base"), Credentials: store.credentials, Archive: "ns/db/binlog",
		UntilGTID: last.gtid.String(), Out: filepath.Join(t.TempDir(), "replay.sql")}
	for passphrase, want := range map[string]string{"": "the archive is encrypted", "another": "does not open"} {
		o.EncryptionKey = passphrase
		if _, err := Replay(ctx, o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a replay of the encrypted archive with passphrase %q: %v, want an error saying %q", passphrase, err, want)
		}
	}
}
