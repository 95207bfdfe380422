package main

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/appkeeper/appkeeper/internal/binlog"
)

// pitrWriter inserts rows on several connections and records when each was acknowledged, with
// its GTID.
type pitrWriter struct {
	mu    sync.Mutex
	acked []pitrAck
}

type pitrAck struct {
	at  time.Time
	seq uint64
}

func (w *pitrWriter) write(ctx context.Context, db *sql.DB, until time.Time) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for time.Now().Before(until) {
		if err := w.insert(ctx, conn); err != nil {
			return err
		}
	}
	return nil
}

func (w *pitrWriter) insert(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "INSERT INTO bench.orders (note, at) VALUES ('order', NOW(6))"); err != nil {
		return err
	}
	at := time.Now()
	var gtid string
	if err := conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&gtid); err != nil {
		return err
	}
	g, err := binlog.ParseGTID(gtid)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.acked = append(w.acked, pitrAck{at: at, seq: g.Seq})
	w.mu.Unlock()
	return nil
}

// archiveWatch lists the archive every 100 ms and records when each sequence number was first
// seen in it.
type archiveWatch struct {
	mu      sync.Mutex
	samples []archiveSample
	pieces  int
	bytes   int64
}

type archiveSample struct {
	at  time.Time
	seq uint64
}

func (a *archiveWatch) run(ctx context.Context, env *backupEnv) {
	for ctx.Err() == nil {
		var newest uint64
		pieces, size := 0, int64(0)
		for object := range env.store.Client.ListObjects(ctx, env.store.Bucket, minio.ListObjectsOptions{Prefix: pitrArchive + "/", Recursive: true}) {
			if object.Err != nil {
				break
			}
			if p, err := binlog.ParsePiece(strings.TrimPrefix(object.Key, pitrArchive+"/")); err == nil {
				newest = max(newest, p.LastSeq)
				pieces, size = pieces+1, size+object.Size
			}
		}
		a.mu.Lock()
		a.samples = append(a.samples, archiveSample{at: time.Now(), seq: newest})
		a.pieces, a.bytes = pieces, size
		a.mu.Unlock()
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

// archivedAt is when the archive was first seen to hold seq, or false.
func (a *archiveWatch) archivedAt(seq uint64) (time.Time, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := sort.Search(len(a.samples), func(i int) bool { return a.samples[i].seq >= seq })
	if i == len(a.samples) {
		return time.Time{}, false
	}
	return a.samples[i].at, true
}

// waitArchived waits until the archive holds seq and returns how long after since it was seen.
func (a *archiveWatch) waitArchived(ctx context.Context, seq uint64, since time.Time) (time.Duration, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if at, ok := a.archivedAt(seq); ok {
			return at.Sub(since), nil
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
	return 0, fmt.Errorf("sequence number %d was not archived within 2 minutes", seq)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
