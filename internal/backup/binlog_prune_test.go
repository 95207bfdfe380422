package backup

import (
	"context"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/internal/binlog"
)

// The archive keeps what the oldest backup beside it needs: whole files before it go, the files
// a replay from it reads stay, and so does the file the shipper writes.
func TestTheArchiveKeepsWhatTheOldestBackupNeeds(t *testing.T) {
	ctx := context.Background()
	primary := startMariaDB(t, clusterArgs(7)...)
	primary.exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))")
	store := archiveStore{target: Target{Volume: t.TempDir()}}
	shipInBackground(t, primary, store, "ns/db/binlog/uid-1")
	w := startWriter(t, primary)
	w.writeFor(300 * time.Millisecond)
	primary.exec(t, "FLUSH BINARY LOGS")
	w.writeFor(300 * time.Millisecond)
	primary.exec(t, "FLUSH BINARY LOGS")
	res, err := Dump(ctx, DumpOptions{Target: store.at("ns/db/base"), Connection: primary.backupConnection(), BinlogArchive: "ns/db/binlog/uid-1"})
	if err != nil {
		t.Fatal(err)
	}
	w.writeFor(300 * time.Millisecond)
	waitShipped(t, primary, store, "ns/db/binlog/uid-1")

	volume, err := newVolumeStorage(store.target.Volume)
	if err != nil {
		t.Fatal(err)
	}
	before, err := listPieces(ctx, volume, "ns/db/binlog/uid-1")
	if err != nil {
		t.Fatal(err)
	}
	deleted, err := pruneArchive(ctx, volume, "ns/db/binlog/uid-1", 0, before)
	if err != nil {
		t.Fatal(err)
	}
	after, err := listPieces(ctx, volume, "ns/db/binlog/uid-1")
	if err != nil {
		t.Fatal(err)
	}
	base, _ := binlog.ParsePosition(res.GTIDPosition)
	files := map[string]bool{}
	for _, p := range after {
		files[p.File] = true
	}
	if deleted == 0 || len(after) != len(before)-deleted || files["binlog.000001"] || !files["binlog.000003"] {
		t.Fatalf("pruning the archive of a backup at %s deleted %d of %d pieces, leaving the files %v; want binlog.000001 gone and the file being written kept",
			res.GTIDPosition, deleted, len(before), files)
	}
	reach, err := binlog.ReachOf(after, 0)
	if err != nil || reach.After > binlog.SeqIn(base, 0) {
		t.Fatalf("after pruning, the archive replays from %d (%v); the backup holds %s", reach.After, err, res.GTIDPosition)
	}
	last := w.rows[len(w.rows)-1]
	ids, _ := restoreTo(t, store, "ns/db/base", ReplayOptions{UntilGTID: last.gtid.String()})
	for _, r := range w.rows {
		if !ids[r.id] {
			t.Errorf("row %d is missing after a restore from the backup through the pruned archive", r.id)
		}
	}
	t.Logf("the backup holds %s; %d of %d pieces deleted, the archive replays from %d", res.GTIDPosition, deleted, len(before), reach.After)
}
