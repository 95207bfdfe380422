package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/appkeeper/appkeeper/internal/backup"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// backupServerArgs size every server of the backup rows, the floors' as well as appkeeper's, for a
// dataset of a few hundred MB: the buffer pool holds it, and the redo log does not throttle a
// restore.
var backupServerArgs = []string{"--innodb-buffer-pool-size=512M", "--innodb-log-file-size=256M"}

const (
	benchRootPassword   = "bench-root"
	benchBackupPassword = "bench-backup"
	benchPassphrase     = "correct horse battery staple"
)

// backupEnv is the servers of the backup rows, in a temporary folder: the source MariaDB with the
// dataset and the backup account, and versitygw.
type backupEnv struct {
	dir      string
	template string
	source   *testservers.MariaDB
	store    *testservers.ObjectStore
}

// startBackupEnv starts the servers in a new folder under parent.
func startBackupEnv(ctx context.Context, parent, versitygw string) (_ *backupEnv, err error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "bench-backup-")
	if err != nil {
		return nil, err
	}
	e := &backupEnv{dir: dir, template: filepath.Join(dir, "template")}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	if err := testservers.InstallDataDir(e.template); err != nil {
		return nil, err
	}
	if e.source, err = e.startServer(ctx, "source"); err != nil {
		return nil, err
	}
	root := e.root(e.source)
	err = execAll(ctx, root, "CREATE USER '"+backup.AccountUser+"'@'%' IDENTIFIED BY '"+benchBackupPassword+"'",
		"GRANT "+backup.AccountPrivileges+" ON *.* TO '"+backup.AccountUser+"'@'%'")
	_ = root.Close()
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(dir, "s3"), 0o700); err != nil {
		return nil, err
	}
	e.store, err = testservers.StartObjectStore(ctx, testservers.ObjectStoreOptions{
		Binary: versitygw, Host: "127.0.0.1", Dir: filepath.Join(dir, "s3")})
	return e, err
}

// startBackupEnvBeside starts the servers beside the cluster's state, not in /tmp, which other
// programs clean.
func startBackupEnvBeside(ctx context.Context, o options) (*backupEnv, error) {
	dir, err := filepath.Abs(filepath.Dir(o.dir))
	if err != nil {
		return nil, err
	}
	return startBackupEnv(ctx, dir, o.versitygw)
}

// startServer starts an empty server in a folder of its own.
func (e *backupEnv) startServer(ctx context.Context, name string) (*testservers.MariaDB, error) {
	dir := filepath.Join(e.dir, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	return testservers.StartMariaDB(ctx, testservers.MariaDBOptions{
		Dir: dir, Template: e.template, RootPassword: benchRootPassword, Args: backupServerArgs})
}

// startServerWith starts an empty server in a folder of its own, with args besides the
// dataset's sizes.
func (e *backupEnv) startServerWith(ctx context.Context, name string, args ...string) (*testservers.MariaDB, error) {
	dir := filepath.Join(e.dir, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	return testservers.StartMariaDB(ctx, testservers.MariaDBOptions{
		Dir: dir, Template: e.template, RootPassword: benchRootPassword, Args: append(slices.Clone(backupServerArgs), args...)})
}

// removeServer stops a server and deletes its files.
func (e *backupEnv) removeServer(server *testservers.MariaDB) {
	server.Stop()
	_ = os.RemoveAll(server.Dir)
}

func (e *backupEnv) stop() {
	if e.store != nil {
		e.store.Stop()
	}
	if e.source != nil {
		e.source.Stop()
	}
	_ = os.RemoveAll(e.dir)
}

// root is a pool of root sessions on server, over TCP, for the caller to close.
func (e *backupEnv) root(server *testservers.MariaDB) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", benchRootPassword, "tcp", fmt.Sprintf("127.0.0.1:%d", server.Port)
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		panic(err) // the configuration is constant
	}
	return sql.OpenDB(connector)
}

func (e *backupEnv) backupConnection() backup.Connection {
	return backup.Connection{Host: "127.0.0.1", Port: e.source.Port, User: backup.AccountUser, Password: benchBackupPassword}
}

func rootConnection(server *testservers.MariaDB) backup.Connection {
	return backup.Connection{Host: "127.0.0.1", Port: server.Port, User: "root", Password: benchRootPassword}
}

func (e *backupEnv) target(key string) backup.Target {
	return backup.Target{S3Endpoint: e.store.Endpoint, S3Bucket: e.store.Bucket, S3Region: e.store.Region, S3PathStyle: true, Key: key}
}

func (e *backupEnv) credentials() backup.Credentials {
	return backup.Credentials{AccessKeyID: e.store.AccessKey, SecretAccessKey: e.store.SecretKey}
}

func execAll(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, statements ...string,
) error {
	for _, statement := range statements {
		if _, err := db.ExecContext(ctx, statement); err != nil {
			return fmt.Errorf("%s: %w", statement, err)
		}
	}
	return nil
}

// benchTable is one table of the dataset: its definition, the expressions of a new row, its share
// of the dataset and roughly what a row takes on disk, indexes included, to size it.
type benchTable struct {
	name, create, columns, row string
	share                      float64
	rowBytes                   int
}

// benchDatabases are the dataset's databases, as a dump lists them.
var benchDatabases = []string{"media", "shop"}

// benchTables mix narrow rows, text, JSON and incompressible blobs (a photo's bytes): what a web
// shop keeps. Every row is new random values, so that the dump compresses as real data would.
var benchTables = []benchTable{
	{
		name: "shop.customers",
		create: `CREATE TABLE shop.customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL,
			email VARCHAR(128) NOT NULL, balance DECIMAL(12,2) NOT NULL, created DATETIME NOT NULL, note TEXT NULL, KEY (email))`,
		columns: "name, email, balance, created, note",
		row: `CONCAT('Grüße ', LEFT(MD5(RAND()), 20)), CONCAT(LEFT(MD5(RAND()), 16), '@example.com'), ROUND(RAND() * 10000, 2),
			'2020-01-01' + INTERVAL FLOOR(RAND() * 200000000) SECOND, IF(RAND() < 0.3, NULL, REPEAT(CONCAT(MD5(RAND()), ' '), 3))`,
		share: 0.3, rowBytes: 200,
	},
	{
		name: "shop.orders",
		create: `CREATE TABLE shop.orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2) NULL,
			status ENUM('new','paid','shipped','cancelled') NOT NULL, placed DATETIME NOT NULL, KEY (customer_id))`,
		columns: "customer_id, total, status, placed",
		row: `1 + FLOOR(RAND() * 100000), IF(RAND() < 0.05, NULL, ROUND(RAND() * 500, 2)),
			ELT(1 + FLOOR(RAND() * 4), 'new', 'paid', 'shipped', 'cancelled'), '2024-01-01' + INTERVAL FLOOR(RAND() * 60000000) SECOND`,
		share: 0.2, rowBytes: 70,
	},
	{
		name: "shop.events",
		create: `CREATE TABLE shop.events (id BIGINT AUTO_INCREMENT PRIMARY KEY, kind VARCHAR(32) NOT NULL, payload JSON NOT NULL,
			at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
		columns: "kind, payload, at",
		row: `ELT(1 + FLOOR(RAND() * 3), 'login', 'view', 'purchase'),
			JSON_OBJECT('session', MD5(RAND()), 'score', RAND(), 'items', JSON_ARRAY(FLOOR(RAND() * 1000), FLOOR(RAND() * 1000))),
			FROM_UNIXTIME(1700000000 + FLOOR(RAND() * 30000000))`,
		share: 0.2, rowBytes: 140,
	},
	{
		name: "media.files",
		create: `CREATE TABLE media.files (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(200) NOT NULL, mime VARCHAR(64) NOT NULL,
			data MEDIUMBLOB NOT NULL)`,
		columns: "name, mime, data",
		// 15 KiB of random bytes: one overflow page each.
		row:   `CONCAT('photo-', LEFT(MD5(RAND()), 12), '.jpg'), 'image/jpeg', CONCAT(` + strings.TrimSuffix(strings.Repeat("RANDOM_BYTES(1024), ", 15), ", ") + `)`,
		share: 0.3, rowBytes: 16500,
	},
}

// dataset is what the source holds once filled.
type dataset struct {
	// MB is the tables' data and indexes as InnoDB stores them.
	MB     float64 `json:"mb"`
	Rows   int64   `json:"rows"`
	Tables int     `json:"tables"`
	// FillS is how long the INSERT … SELECT doublings took.
	FillS float64 `json:"fill_s"`
}

// fillDataset creates the tables and fills them to about mb MB together, each doubling itself with
// INSERT … SELECT until it holds its share, outside the binary log.
func fillDataset(ctx context.Context, db *sql.DB, mb int) (dataset, error) {
	start := time.Now()
	conn, err := db.Conn(ctx)
	if err != nil {
		return dataset{}, err
	}
	defer conn.Close()
	if err := execAll(ctx, conn, "SET SESSION sql_log_bin = 0",
		"CREATE DATABASE media CHARACTER SET utf8mb4", "CREATE DATABASE shop CHARACTER SET utf8mb4"); err != nil {
		return dataset{}, err
	}
	for _, t := range benchTables {
		if err := fillTable(ctx, conn, t, int64(t.share*float64(mb)*1e6)); err != nil {
			return dataset{}, err
		}
	}
	d := dataset{Tables: len(benchTables), FillS: round2(time.Since(start).Seconds())}
	var bytes int64
	if err := conn.QueryRowContext(ctx, `SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA IN ('media', 'shop')`).Scan(&bytes); err != nil {
		return d, err
	}
	d.MB = round2(float64(bytes) / 1e6)
	d.Rows, err = countRows(ctx, db)
	return d, err
}

// fillTable creates t and doubles it until it takes about goal bytes: the estimate of a row's
// size gives the first target, the table's own size once it spans a few MB the final one.
func fillTable(ctx context.Context, conn *sql.Conn, t benchTable, goal int64) error {
	if err := execAll(ctx, conn, t.create, "INSERT INTO "+t.name+" ("+t.columns+") SELECT "+t.row); err != nil {
		return err
	}
	target, calibrated := max(goal/int64(t.rowBytes), 1), false
	for rows := int64(1); rows < target; {
		batch := min(rows, target-rows)
		statement := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s LIMIT %d", t.name, t.columns, t.row, t.name, batch)
		if err := execAll(ctx, conn, statement); err != nil {
			return err
		}
		rows += batch
		if !calibrated && rows*int64(t.rowBytes) >= 4e6 {
			calibrated = true
			bytes, err := tableBytes(ctx, conn, t.name)
			if err != nil {
				return err
			}
			target = max(goal*rows/max(bytes, 1), rows)
		}
	}
	_, err := tableBytes(ctx, conn, t.name)
	return err
}

// tableBytes is the size of a table's data and indexes, once ANALYZE TABLE has counted them.
func tableBytes(ctx context.Context, conn *sql.Conn, name string) (int64, error) {
	if err := execAll(ctx, conn, "ANALYZE TABLE "+name); err != nil {
		return 0, err
	}
	database, table, _ := strings.Cut(name, ".")
	var bytes int64
	err := conn.QueryRowContext(ctx, `SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, database, table).Scan(&bytes)
	return bytes, err
}

// countRows counts the rows of the dataset's tables on a server.
func countRows(ctx context.Context, db *sql.DB) (int64, error) {
	var total int64
	for _, t := range benchTables {
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+t.name).Scan(&n); err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
