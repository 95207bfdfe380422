package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/internal/binlog"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// pitrServerArgs are those of a server whose binary log is archived, as the operator runs it.
var pitrServerArgs = []string{"--log-bin=binlog", "--server-id=1", "--binlog-format=ROW", "--sync-binlog=1",
	"--innodb-flush-log-at-trx-commit=1", "--gtid-strict-mode"}

const pitrArchive = "bench/db/binlog"

// pitrResult is the point-in-time section: how late the archive is behind the commits, while
// writing and after quiet spells, and how fast a replay is against piping the same binary logs
// into the server by hand.
type pitrResult struct {
	WritingS      float64 `json:"writingS"`
	Transactions  int     `json:"transactions"`
	Pieces        int     `json:"pieces"`
	ArchiveMB     float64 `json:"archiveMB"`
	LagP50MS      float64 `json:"lagP50MS"`
	LagP99MS      float64 `json:"lagP99MS"`
	LagMaxMS      float64 `json:"lagMaxMS"`
	QuietTrials   int     `json:"quietTrials"`
	QuietP50MS    float64 `json:"quietP50MS"`
	QuietMaxMS    float64 `json:"quietMaxMS"`
	LongQuietS    float64 `json:"longQuietS"`
	LongQuietMS   float64 `json:"longQuietMS"`
	ReplayS       float64 `json:"replayS"`
	ReplayDetail  string  `json:"replayDetail"`
	HandS         float64 `json:"handS"`
	SpeedRatio    float64 `json:"speedRatio"`
	ReplayedCount int     `json:"replayed"`
	loads         []loadSample
}

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

// measurePITR ships a server's binary log while a writer writes for o.pitrSeconds, then after
// quiet spells, and replays it.
func measurePITR(ctx context.Context, o options) (*pitrResult, error) {
	dir, err := filepath.Abs(filepath.Dir(o.dir))
	if err != nil {
		return nil, err
	}
	env, err := startBackupEnv(ctx, dir, o.versitygw)
	if err != nil {
		return nil, err
	}
	defer env.stop()
	source, err := env.startServerWith(ctx, "archived", pitrServerArgs...)
	if err != nil {
		return nil, err
	}
	defer env.removeServer(source)
	root := env.root(source)
	defer root.Close()
	root.SetMaxOpenConns(8)
	if err := execAll(ctx, root, "CREATE DATABASE bench",
		"CREATE TABLE bench.orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(32), at DATETIME(6))",
		"CREATE USER '"+backup.AccountUser+"'@'%' IDENTIFIED BY '"+benchBackupPassword+"'",
		"GRANT "+backup.AccountPrivileges+" ON *.* TO '"+backup.AccountUser+"'@'%'"); err != nil {
		return nil, err
	}
	shipCtx, stopShipping := context.WithCancel(ctx)
	shipped := make(chan error, 1)
	go func() {
		shipped <- backup.Ship(shipCtx, backup.ShipOptions{Target: env.target(pitrArchive), Credentials: env.credentials(),
			Connection: rootConnection(source), EncryptionKey: benchPassphrase})
	}()
	defer func() { stopShipping(); <-shipped }()
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	watch := &archiveWatch{}
	go watch.run(watchCtx, env)

	baseKey := "bench/db/base"
	if _, err := backup.Dump(ctx, backup.DumpOptions{Target: env.target(baseKey), Credentials: env.credentials(), EncryptionKey: benchPassphrase,
		Connection: backup.Connection{Host: "127.0.0.1", Port: source.Port, User: backup.AccountUser, Password: benchBackupPassword},
		BinlogArchive: pitrArchive}); err != nil {
		return nil, fmt.Errorf("base backup: %w", err)
	}
	var basePosition string
	if err := root.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&basePosition); err != nil {
		return nil, err
	}

	r := &pitrResult{WritingS: float64(o.pitrSeconds), loads: []loadSample{sampleLoad("the point-in-time section")}}
	progress("pitr: writing for %d s on 4 connections while the binary log ships", o.pitrSeconds)
	w := &pitrWriter{}
	until := time.Now().Add(time.Duration(o.pitrSeconds) * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- w.write(ctx, root, until) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return nil, err
		}
	}
	last := slices.MaxFunc(w.acked, func(a, b pitrAck) int { return int(a.seq) - int(b.seq) })
	if _, err := watch.waitArchived(ctx, last.seq, last.at); err != nil {
		return nil, err
	}
	var lags []time.Duration
	for _, a := range w.acked {
		at, _ := watch.archivedAt(a.seq)
		lags = append(lags, max(0, at.Sub(a.at)))
	}
	r.Transactions = len(w.acked)
	r.LagP50MS, r.LagP99MS, r.LagMaxMS = percentileMS(lags, 0.5), percentileMS(lags, 0.99), percentileMS(lags, 1)
	progress("pitr: %d transactions, archive lag p50 %.0f ms, p99 %.0f ms, max %.0f ms", r.Transactions, r.LagP50MS, r.LagP99MS, r.LagMaxMS)

	if err := r.quiet(ctx, root, watch); err != nil {
		return nil, err
	}
	watch.mu.Lock()
	r.Pieces, r.ArchiveMB = watch.pieces, float64(watch.bytes)/1e6
	watch.mu.Unlock()

	progress("pitr: replaying %d transactions, and piping the same binary logs into a server by hand", r.Transactions)
	if err := r.replays(ctx, env, source, baseKey, basePosition); err != nil {
		return nil, err
	}
	return r, nil
}

// quiet writes one row after each of several quiet spells, the last of 30 s, and times until
// the archive holds it: a quiet database must not wait for more writes to be shipped.
func (r *pitrResult) quiet(ctx context.Context, db *sql.DB, watch *archiveWatch) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	w := &pitrWriter{}
	var lags []time.Duration
	spells := []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second,
		3 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second, 30 * time.Second}
	for i, spell := range spells {
		sleepCtx(ctx, spell)
		if err := w.insert(ctx, conn); err != nil {
			return err
		}
		a := w.acked[i]
		lag, err := watch.waitArchived(ctx, a.seq, a.at)
		if err != nil {
			return err
		}
		lags = append(lags, lag)
	}
	r.QuietTrials = len(lags) - 1
	r.QuietP50MS, r.QuietMaxMS = percentileMS(lags[:len(lags)-1], 0.5), percentileMS(lags[:len(lags)-1], 1)
	r.LongQuietS, r.LongQuietMS = spells[len(spells)-1].Seconds(), float64(lags[len(lags)-1].Milliseconds())
	progress("pitr: after 3 s of quiet a write was archived in p50 %.0f ms, max %.0f ms; after 30 s in %.0f ms", r.QuietP50MS, r.QuietMaxMS, r.LongQuietMS)
	return nil
}

// replays loads the base into two servers, then times appkeeper's replay (the archive read,
// filtered and turned into SQL, then run by mysql) on one against mariadb-binlog piping the
// server's own binary log files from the base's position into mysql on the other.
func (r *pitrResult) replays(ctx context.Context, env *backupEnv, source *testservers.MariaDB, baseKey, basePosition string) error {
	var basename string
	if err := env.root(source).QueryRowContext(ctx, "SELECT @@log_bin_basename").Scan(&basename); err != nil {
		return err
	}
	files, err := filepath.Glob(basename + ".[0-9]*")
	if err != nil {
		return err
	}
	dump := filepath.Join(env.dir, "base.sql.gz")
	if _, err := backup.Fetch(ctx, backup.FetchOptions{Target: env.target(baseKey), Credentials: env.credentials(), EncryptionKey: benchPassphrase, Out: dump}); err != nil {
		return err
	}
	ours, err := env.startServer(ctx, "replayed")
	if err != nil {
		return err
	}
	defer env.removeServer(ours)
	hand, err := env.startServer(ctx, "by-hand")
	if err != nil {
		return err
	}
	defer env.removeServer(hand)
	for _, server := range []*testservers.MariaDB{ours, hand} {
		if err := load(ctx, dump, server); err != nil {
			return err
		}
	}
	var target string
	if err := env.root(source).QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&target); err != nil {
		return err
	}
	sqlFile := filepath.Join(env.dir, "replay.sql")
	began := time.Now()
	res, err := backup.Replay(ctx, backup.ReplayOptions{Target: env.target(baseKey), Credentials: env.credentials(), EncryptionKey: benchPassphrase,
		UntilGTID: target, Out: sqlFile})
	if err != nil {
		return err
	}
	readS := time.Since(began).Seconds()
	in, err := os.Open(sqlFile)
	if err != nil {
		return err
	}
	client := mysqlClient(ctx, ours)
	client.Stdin = in
	out, err := client.CombinedOutput()
	_ = in.Close()
	if err != nil {
		return fmt.Errorf("mysql < %s: %w: %s", sqlFile, err, out)
	}
	r.ReplayS, r.ReplayedCount = time.Since(began).Seconds(), res.Replayed
	r.ReplayDetail = fmt.Sprintf("archive read and turned into SQL %.1f s, mysql %.1f s", readS, r.ReplayS-readS)

	began = time.Now()
	binlogs := exec.CommandContext(ctx, "mariadb-binlog", append([]string{"--no-defaults", "--start-position=" + basePosition}, files...)...)
	if err := pipeline(binlogs, mysqlClient(ctx, hand)); err != nil {
		return err
	}
	r.HandS = time.Since(began).Seconds()
	r.SpeedRatio = r.HandS / r.ReplayS
	for _, server := range []*testservers.MariaDB{ours, hand} {
		var rows int
		if err := env.root(server).QueryRowContext(ctx, "SELECT COUNT(*) FROM bench.orders").Scan(&rows); err != nil {
			return err
		}
		if rows < r.Transactions {
			return fmt.Errorf("the server %s holds %d rows after the replay, want %d", filepath.Base(server.Dir), rows, r.Transactions)
		}
	}
	progress("pitr: replay %.1f s (%s), by hand %.1f s: %.2f× its speed", r.ReplayS, r.ReplayDetail, r.HandS, r.SpeedRatio)
	return nil
}

func mysqlClient(ctx context.Context, server *testservers.MariaDB) *exec.Cmd {
	client := exec.CommandContext(ctx, "mysql", "--no-defaults", "--protocol=TCP", "-h127.0.0.1",
		fmt.Sprintf("-P%d", server.Port), "-uroot", "--max-allowed-packet=64M")
	client.Env = append(os.Environ(), backup.EnvMySQLPassword+"="+benchRootPassword)
	return client
}

const pitrHeader = "| writing | transactions | archive lag p50 / p99 / max ms | after 3 s quiet p50 / max ms | after 30 s quiet ms | pieces | archive MB | replay s | by hand s | replay speed (by hand = 1) |\n" +
	"| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"

func (r *pitrResult) table() string {
	return fmt.Sprintf("One MariaDB server with `sync_binlog=1`, its binary log shipped every second to versitygw, "+
		"sealed; 4 connections insert rows as fast as they can. The lag of a transaction is from its acknowledgement to the "+
		"first listing of the archive (every 100 ms) that holds it. The replay restores the base backup's position onward "+
		"(%d transactions): appkeeper's replay (%s) against `mariadb-binlog --start-position=<base> <files> | mysql` on the "+
		"server's own files.\n\n", r.ReplayedCount, r.ReplayDetail) + pitrHeader +
		fmt.Sprintf("| %.0f s | %d | %.0f / %.0f / %.0f | %.0f / %.0f (%d trials) | %.0f | %d | %.1f | %.1f | %.1f | %.2f |\n",
			r.WritingS, r.Transactions, r.LagP50MS, r.LagP99MS, r.LagMaxMS, r.QuietP50MS, r.QuietMaxMS, r.QuietTrials,
			r.LongQuietMS, r.Pieces, r.ArchiveMB, r.ReplayS, r.HandS, r.SpeedRatio)
}

// runPITR measures the point-in-time section and writes its report.
func (b *bench) runPITR(ctx context.Context) error {
	progress("pitr: the binary log archive's lag and replay speed")
	r, err := measurePITR(ctx, b.o)
	if err != nil {
		return fmt.Errorf("point-in-time recovery: %w", err)
	}
	return b.writeReport(report{suffix: "-pitr", title: "Point-in-time recovery benchmark", table: r.table(), key: "pitr", figures: r, loads: r.loads}, true)
}
