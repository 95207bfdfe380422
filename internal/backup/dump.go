package backup

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"time"
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
	return nil
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
		ServerVersion: snap.serverVersion, BinlogPosition: snap.binlogPosition, Created: created,
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
