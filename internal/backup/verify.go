package backup

import (
	"context"
	"fmt"
	"time"
)

// VerifyOptions are the inputs of Verify.
type VerifyOptions struct {
	Target      Target
	Credentials Credentials
	// Connection is the restored server, as root.
	Connection Connection
	// WaitTimeout bounds the wait for the server to accept connections.
	WaitTimeout time.Duration
}

// defaultWaitTimeout leaves a restored server the time to load a large dump before it listens.
const defaultWaitTimeout = 10 * time.Minute

// maxMismatches bounds the mismatches a Result lists: it must fit a termination message.
const maxMismatches = 20

// Verify compares every table of the target's manifest with the server's. Its verdict is
// Result.Verified; an error means there is no verdict (the server or the storage failed).
func Verify(ctx context.Context, o VerifyOptions) (Result, error) {
	res := Result{Key: o.Target.Key}
	if err := validateKey(o.Target.Key); err != nil {
		return res, fmt.Errorf("--%s: %w", flagKey, err)
	}
	if o.Connection.Host == "" || o.Connection.User == "" {
		return res, fmt.Errorf("--%s and --%s are required", FlagHost, FlagUser)
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = defaultWaitTimeout
	}
	store, err := openStorage(o.Target, o.Credentials)
	if err != nil {
		return res, err
	}
	// The manifest first: a storage error is told at once, not after the server's start.
	m, err := readManifest(ctx, store, o.Target.Key)
	if err != nil {
		return res, err
	}
	res = m.result()
	res.Key, res.Artifact = o.Target.Key, ArtifactKey(o.Target.Key, m.Encrypted)
	db, err := o.Connection.waitFor(ctx, o.WaitTimeout)
	if err != nil {
		return res, err
	}
	defer db.Close()
	mismatches, err := compareTables(ctx, db, m)
	if err != nil {
		return res, o.Connection.describe(err)
	}
	verified := len(mismatches) == 0
	res.Verified = &verified
	res.Mismatches = boundMismatches(mismatches)
	return res, nil
}

// compareTables lists how the server's tables differ from the manifest's: a table of the
// manifest that is missing or differs, and a table the server has in one of the manifest's
// databases that the backup did not hold. Other databases are not the backup's concern.
func compareTables(ctx context.Context, q querier, m *manifest) ([]string, error) {
	tables, err := listTables(ctx, q, m.Databases)
	if err != nil {
		return nil, err
	}
	databases, err := existingDatabases(ctx, q, m.Databases)
	if err != nil {
		return nil, err
	}
	var mismatches []string
	for _, name := range m.Databases {
		if !databases[name] {
			mismatches = append(mismatches, name+": database missing")
		}
	}
	onServer := make(map[string]table, len(tables))
	for _, t := range tables {
		onServer[t.database+"."+t.name] = t
	}
	inBackup := make(map[string]bool, len(m.Tables))
	for _, want := range m.Tables {
		inBackup[want.name()] = true
		t, ok := onServer[want.name()]
		if !ok && !databases[want.Database] {
			continue // told once, for its database
		}
		if !ok {
			mismatches = append(mismatches, want.name()+": missing")
			continue
		}
		got, err := checksumTable(ctx, q, t)
		if err != nil {
			return nil, err
		}
		switch {
		case got.Rows != want.Rows:
			mismatches = append(mismatches, fmt.Sprintf("%s: rows %d != %d", want.name(), want.Rows, got.Rows))
		case got.Checksum != want.Checksum:
			mismatches = append(mismatches, fmt.Sprintf("%s: checksum %s != %s", want.name(), want.Checksum, got.Checksum))
		}
	}
	for _, t := range tables {
		if name := t.database + "." + t.name; !inBackup[name] {
			mismatches = append(mismatches, name+": not in the backup")
		}
	}
	return mismatches, nil
}

// boundMismatches keeps the first mismatches and says how many more there are.
func boundMismatches(mismatches []string) []string {
	if len(mismatches) <= maxMismatches {
		return mismatches
	}
	kept := append([]string(nil), mismatches[:maxMismatches-1]...)
	return append(kept, fmt.Sprintf("and %d more", len(mismatches)-len(kept)))
}

func existingDatabases(ctx context.Context, q querier, names []string) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")
	if err != nil {
		return nil, err
	}
	all, err := scanStrings(rows)
	if err != nil {
		return nil, err
	}
	wanted := make(map[string]bool, len(names))
	for _, name := range names {
		wanted[name] = true
	}
	existing := map[string]bool{}
	for _, name := range all {
		if wanted[name] {
			existing[name] = true
		}
	}
	return existing, nil
}
