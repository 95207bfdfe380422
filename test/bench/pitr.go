package main

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/appkeeper/appkeeper/internal/backup"
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

// pitrSource is the archived server: its shipper and the watch of its archive run until stop.
type pitrSource struct {
	env    *backupEnv
	server *testservers.MariaDB
	root   *sql.DB
	watch  *archiveWatch
	stop   func() error
}

// startPITRSource starts the server with its table and backup account, ships its binary log and
// watches the archive.
func startPITRSource(ctx context.Context, env *backupEnv) (*pitrSource, error) {
	server, err := env.startServerWith(ctx, "archived", pitrServerArgs...)
	if err != nil {
		return nil, err
	}
	root := env.root(server)
	root.SetMaxOpenConns(8)
	if err := execAll(ctx, root, "CREATE DATABASE bench",
		"CREATE TABLE bench.orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(32), at DATETIME(6))",
		"CREATE USER '"+backup.AccountUser+"'@'%' IDENTIFIED BY '"+benchBackupPassword+"'",
		"GRANT "+backup.AccountPrivileges+" ON *.* TO '"+backup.AccountUser+"'@'%'"); err != nil {
		_ = root.Close()
		env.removeServer(server)
		return nil, err
	}
	running, cancel := context.WithCancel(ctx)
	shipped := make(chan error, 1)
	go func() {
		shipped <- backup.Ship(running, backup.ShipOptions{Target: env.target(pitrArchive), Credentials: env.credentials(),
			Connection: rootConnection(server), EncryptionKey: benchPassphrase})
	}()
	watch := &archiveWatch{}
	go watch.run(running, env)
	return &pitrSource{env: env, server: server, root: root, watch: watch, stop: func() error {
		cancel()
		err := <-shipped
		_ = root.Close()
		env.removeServer(server)
		return err
	}}, nil
}

// measurePITR ships a server's binary log while a writer writes for o.pitrSeconds, then after
// quiet spells, and replays it.
func measurePITR(ctx context.Context, o options) (_ *pitrResult, err error) {
	env, err := startBackupEnvBeside(ctx, o)
	if err != nil {
		return nil, err
	}
	defer env.stop()
	source, err := startPITRSource(ctx, env)
	if err != nil {
		return nil, err
	}
	defer func() {
		if stopErr := source.stop(); err == nil && stopErr != nil {
			err = fmt.Errorf("ship: %w", stopErr)
		}
	}()
	const baseKey = "bench/db/base"
	if _, err := backup.Dump(ctx, backup.DumpOptions{Target: env.target(baseKey), Credentials: env.credentials(),
		EncryptionKey: benchPassphrase, BinlogArchive: pitrArchive,
		Connection: backup.Connection{Host: "127.0.0.1", Port: source.server.Port, User: backup.AccountUser, Password: benchBackupPassword},
	}); err != nil {
		return nil, fmt.Errorf("base backup: %w", err)
	}
	var basePosition string
	if err := source.root.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&basePosition); err != nil {
		return nil, err
	}
	r := &pitrResult{WritingS: float64(o.pitrSeconds), loads: []loadSample{sampleLoad("the point-in-time section")}}
	if err := r.writing(ctx, source, time.Duration(o.pitrSeconds)*time.Second); err != nil {
		return nil, err
	}
	if err := r.quiet(ctx, source.root, source.watch); err != nil {
		return nil, err
	}
	source.watch.mu.Lock()
	r.Pieces, r.ArchiveMB = source.watch.pieces, float64(source.watch.bytes)/1e6
	source.watch.mu.Unlock()
	progress("pitr: replaying %d transactions, and piping the same binary logs into a server by hand", r.Transactions)
	return r, r.replays(ctx, source, baseKey, basePosition)
}

// writing inserts on 4 connections for d and measures, for each transaction, how long after its
// acknowledgement the archive held it.
func (r *pitrResult) writing(ctx context.Context, source *pitrSource, d time.Duration) error {
	progress("pitr: writing for %s on 4 connections while the binary log ships", d)
	w := &pitrWriter{}
	until := time.Now().Add(d)
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- w.write(ctx, source.root, until) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			return err
		}
	}
	last := slices.MaxFunc(w.acked, func(a, b pitrAck) int { return cmp.Compare(a.seq, b.seq) })
	if _, err := source.watch.waitArchived(ctx, last.seq, last.at); err != nil {
		return err
	}
	lags := make([]time.Duration, 0, len(w.acked))
	for _, a := range w.acked {
		at, _ := source.watch.archivedAt(a.seq)
		lags = append(lags, max(0, at.Sub(a.at)))
	}
	r.Transactions = len(w.acked)
	r.LagP50MS, r.LagP99MS, r.LagMaxMS = percentileMS(lags, 0.5), percentileMS(lags, 0.99), percentileMS(lags, 1)
	progress("pitr: %d transactions, archive lag p50 %.0f ms, p99 %.0f ms, max %.0f ms", r.Transactions, r.LagP50MS, r.LagP99MS, r.LagMaxMS)
	return nil
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
func (r *pitrResult) replays(ctx context.Context, source *pitrSource, baseKey, basePosition string) error {
	env := source.env
	var basename, target string
	if err := source.root.QueryRowContext(ctx, "SELECT @@log_bin_basename, @@gtid_binlog_pos").Scan(&basename, &target); err != nil {
		return err
	}
	files, err := filepath.Glob(basename + ".[0-9]*")
	if err != nil {
		return err
	}
	ours, hand, err := baseServers(ctx, env, baseKey)
	if err != nil {
		return err
	}
	defer env.removeServer(ours)
	defer env.removeServer(hand)

	sqlFile := filepath.Join(env.dir, "replay.sql")
	began := time.Now()
	res, err := backup.Replay(ctx, backup.ReplayOptions{Target: env.target(baseKey), Credentials: env.credentials(), EncryptionKey: benchPassphrase,
		UntilGTID: target, Out: sqlFile})
	if err != nil {
		return err
	}
	readS := time.Since(began).Seconds()
	if err := runSQLFile(ctx, ours, sqlFile); err != nil {
		return err
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

// baseServers starts two servers, each loaded with the base backup.
func baseServers(ctx context.Context, env *backupEnv, baseKey string) (ours, hand *testservers.MariaDB, err error) {
	dump := filepath.Join(env.dir, "base.sql.gz")
	if _, err := backup.Fetch(ctx, backup.FetchOptions{Target: env.target(baseKey), Credentials: env.credentials(), EncryptionKey: benchPassphrase, Out: dump}); err != nil {
		return nil, nil, err
	}
	var servers []*testservers.MariaDB
	for _, name := range []string{"replayed", "by-hand"} {
		server, err := env.startServer(ctx, name)
		if err == nil {
			servers = append(servers, server)
			err = load(ctx, dump, server)
		}
		if err != nil {
			for _, s := range servers {
				env.removeServer(s)
			}
			return nil, nil, err
		}
	}
	return servers[0], servers[1], nil
}

// runSQLFile runs the SQL of file on server, as root.
func runSQLFile(ctx context.Context, server *testservers.MariaDB, file string) error {
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	client := mysqlClient(ctx, server)
	client.Stdin = in
	if out, err := client.CombinedOutput(); err != nil {
		return fmt.Errorf("mysql < %s: %w: %s", file, err, out)
	}
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
