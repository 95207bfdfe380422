package backup

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/appkeeper/appkeeper/internal/replication"
)

// DumpOptions are the inputs of Dump.
type DumpOptions struct {
	Target      Target
	Credentials Credentials
	// Connection is the server and the backup account.
	Connection Connection
	// EncryptionKey, when set, is the passphrase the artifact is encrypted with.
	EncryptionKey string
	// CompressLevel is gzip's level, 0 (none) to 9 (smallest).
	CompressLevel int
	// Prune are the keys of backups to delete once this one is complete.
	Prune []string
	// CatchUpHost, when set, is the host, or host:port, of the primary of the replica Connection reaches: the replica applies
	// every transaction the primary holds when the dump starts before its snapshot is taken, so
	// that the backup holds every write acknowledged before it, as a dump of the primary would.
	CatchUpHost string
	// CatchUpTimeout bounds that wait; zero means the default.
	CatchUpTimeout time.Duration
	// BinlogArchive, when set, is the key of the server's binary log archive in the same
	// storage, which the manifest records for a replay after this backup.
	BinlogArchive string
	// DumpCommand replaces the mysqldump found on the PATH.
	DumpCommand string
	// LockTimeout bounds the wait for the global read lock; DumpStartTimeout the wait for
	// mysqldump's transaction. LongStatement is how long a running statement may have run when
	// the lock is taken. Zero means the defaults.
	LockTimeout, DumpStartTimeout, LongStatement time.Duration
}

// Defaults of DumpOptions' timeouts. Writers wait while the lock is requested, so its wait is
// short; mysqldump's start only reads the server's metadata.
const (
	defaultLockTimeout      = 30 * time.Second
	defaultDumpStartTimeout = time.Minute
	// defaultLongStatement tells an application's statements from a report's or a batch's.
	defaultLongStatement = 10 * time.Second
	// defaultCatchUpTimeout is how long a replica may take to apply what its primary holds.
	defaultCatchUpTimeout = 5 * time.Minute
)

// Dump backs up every user database of the server into the target, in one consistent
// snapshot: the artifact first, then its manifest; then it deletes the backups of o.Prune.
// On failure the target's key holds nothing: no artifact and no manifest.
func Dump(ctx context.Context, o DumpOptions) (Result, error) {
	res := Result{Key: o.Target.Key}
	if err := o.validate(); err != nil {
		return res, err
	}
	store, err := openStorage(o.Target, o.Credentials)
	if err != nil {
		return res, err
	}
	tool, err := findDumpTool(ctx, o.DumpCommand)
	if err != nil {
		return res, err
	}
	if err := store.check(ctx); err != nil {
		return res, err
	}
	db, err := o.Connection.connect(ctx)
	if err != nil {
		return res, err
	}
	defer db.Close()
	if err := o.catchUp(ctx, db); err != nil {
		return res, err
	}
	var m *manifest
	err = replaceBackup(ctx, store, sqlObjects(o.Target.Key), func() (err error) {
		m, err = o.dump(ctx, store, tool, db)
		return err
	})
	if err != nil {
		return res, err
	}
	res = m.result()
	pruned, err := prune(ctx, store, o.Target.Key, o.Prune, sqlObjects)
	res.Pruned = pruned
	if err != nil {
		return res, fmt.Errorf("the backup is complete, but pruning older backups failed: %w", err)
	}
	return res, nil
}

func (o *DumpOptions) validate() error {
	if err := validateWrite(o.Target.Key, o.Prune, o.CompressLevel); err != nil {
		return err
	}
	if o.Connection.Host == "" || o.Connection.User == "" {
		return fmt.Errorf("--%s and --%s are required", FlagHost, FlagUser)
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = defaultLockTimeout
	}
	if o.LongStatement == 0 {
		o.LongStatement = defaultLongStatement
	}
	if o.DumpStartTimeout == 0 {
		o.DumpStartTimeout = defaultDumpStartTimeout
	}
	if o.CatchUpTimeout == 0 {
		o.CatchUpTimeout = defaultCatchUpTimeout
	}
	return nil
}

// catchUp waits until the replica db applied every transaction its primary, at o.CatchUpHost,
// holds now, when there is one.
func (o *DumpOptions) catchUp(ctx context.Context, replica *sql.DB) error {
	if o.CatchUpHost == "" {
		return nil
	}
	source := o.Connection
	source.Host = o.CatchUpHost
	if host, port, err := net.SplitHostPort(o.CatchUpHost); err == nil {
		source.Host = host
		if source.Port, err = strconv.Atoi(port); err != nil {
			return usageError{fmt.Errorf("--%s %s: the port is not a number", FlagCatchUpHost, o.CatchUpHost)}
		}
	}
	primary, err := source.connect(ctx)
	if err != nil {
		return err
	}
	defer primary.Close()
	var primaryHeld string
	if err := primary.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&primaryHeld); err != nil {
		return source.describe(err)
	}
	want, err := replication.ParsePosition(primaryHeld)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(o.CatchUpTimeout)
	for {
		held, err := appliedPosition(ctx, replica)
		if err != nil {
			return o.Connection.describe(err)
		}
		if held.Covers(want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replica %s did not apply the transactions of its primary %s (up to %s) within %s: the backup gives up rather than miss them",
				o.Connection.Host, o.CatchUpHost, want, o.CatchUpTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(catchUpPoll):
		}
	}
}

// catchUpPoll is how often catchUp reads the replica's position.
const catchUpPoll = 200 * time.Millisecond

// appliedPosition is every transaction the server holds, replicated or written there: the
// newest of its binary log's and its replication's position in each domain. The replica may
// have become the primary since the dump began, and then the transactions it writes are in its
// binary log alone, which MASTER_GTID_WAIT never looks at.
func appliedPosition(ctx context.Context, db *sql.DB) (replication.Position, error) {
	var binlogPos, slavePos string
	if err := db.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos, @@gtid_slave_pos").Scan(&binlogPos, &slavePos); err != nil {
		return nil, err
	}
	written, err := replication.ParsePosition(binlogPos)
	if err != nil {
		return nil, err
	}
	replicated, err := replication.ParsePosition(slavePos)
	if err != nil {
		return nil, err
	}
	return written.Newest(replicated), nil
}

// validateWrite checks the flags of a subcommand that writes a backup: its key, the keys it
// prunes and the compression level.
func validateWrite(key string, prune []string, level int) error {
	if err := validateKey(key); err != nil {
		return fmt.Errorf("--%s: %w", flagKey, err)
	}
	for _, key := range prune {
		if err := validateKey(key); err != nil {
			return fmt.Errorf("--%s: %w", FlagPrune, err)
		}
	}
	if level < 0 || level > 9 {
		return fmt.Errorf("--%s %d is not between 0 and 9", flagCompressLevel, level)
	}
	return nil
}

type storeOutcome struct {
	stored stored
	err    error
}

// dump streams mysqldump's output into the store while it checksums every table in the same
// snapshot, then writes the manifest.
func (o *DumpOptions) dump(ctx context.Context, store storage, tool dumpTool, db *sql.DB) (*manifest, error) {
	encrypted := o.EncryptionKey != ""
	artifact := ArtifactKey(o.Target.Key, encrypted)
	var outcome chan storeOutcome
	storeInBackground := func(src artifactSource) {
		outcome = make(chan storeOutcome, 1)
		go func() {
			s, err := storeArtifact(ctx, store, artifact, src, o.CompressLevel, o.EncryptionKey)
			outcome <- storeOutcome{s, err}
		}()
	}
	start := func(databases []string) (*dumpProcess, error) {
		process, err := startDump(ctx, tool, o.Connection, databases)
		if err != nil {
			return nil, err
		}
		storeInBackground(process)
		return process, nil
	}
	timeouts := snapshotTimeouts{lock: o.LockTimeout, dumpStart: o.DumpStartTimeout, longStatement: o.LongStatement}
	snap, process, err := takeSnapshot(ctx, db, o.Connection, timeouts, start)
	if err != nil {
		if outcome != nil {
			<-outcome // the dump was aborted: the store gives up and keeps nothing
		}
		return nil, err
	}
	if process == nil {
		// An empty backup still restores (to nothing) and verifies: a server without a database
		// of its own must not fail the backup taken before its upgrade.
		storeInBackground(emptyDump())
	}
	created := time.Now().UTC()
	sums, sumErr := snapshotChecksums(ctx, snap)
	snap.close()
	if sumErr != nil && process != nil {
		process.abort()
	}
	out := <-outcome
	if sumErr != nil {
		return nil, sumErr
	}
	if out.err != nil {
		return nil, out.err
	}
	if err := checkStored(ctx, store, artifact, out.stored); err != nil {
		return nil, err
	}
	m := &manifest{
		FormatVersion: manifestFormatVersion, Key: o.Target.Key, Artifact: artifact,
		Size: out.stored.size, SHA256: out.stored.sha256, Encrypted: encrypted, Compression: "gzip",
		ServerVersion: snap.serverVersion, BinlogPosition: snap.binlogPosition, GTIDPosition: snap.gtidPosition, BinlogArchive: o.BinlogArchive, Created: created,
		Databases: append([]string{}, snap.databases...), Tables: sums,
	}
	if err := writeManifest(ctx, store, m); err != nil {
		return nil, err
	}
	return m, nil
}

// emptyDump is the SQL of a server without a database of its own: a comment.
func emptyDump() artifactSource {
	return staticDump{strings.NewReader("-- The server held no database besides its own when it was backed up.\n")}
}

type staticDump struct{ io.Reader }

func (staticDump) wait() error { return nil }
func (staticDump) abort()      {}

func snapshotChecksums(ctx context.Context, snap *snapshot) ([]tableChecksum, error) {
	tables, err := listTables(ctx, snap.conn, snap.databases)
	if err != nil {
		return nil, err
	}
	return checksumTables(ctx, snap.conn, tables)
}
