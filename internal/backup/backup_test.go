package backup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// backupEnv is one seeded source server and one object store, shared by the scenarios of
// TestBackups: starting servers is what takes time.
type backupEnv struct {
	source *mariadb
	s3     *s3Server
	blob   []byte
}

func TestBackups(t *testing.T) {
	env := &backupEnv{source: startMariaDB(t), s3: startVersityGW(t, nil)}
	env.blob = seed(t, env.source)

	t.Run("to S3, restored and verified", func(t *testing.T) {
		env.roundTrip(t, env.s3.target("prod/shop/db/full"), env.s3.credentials())
	})
	t.Run("to a volume, restored and verified", func(t *testing.T) {
		volume := t.TempDir()
		env.roundTrip(t, Target{Volume: volume, Key: "backups/shop/db/full"}, Credentials{})
		entries, _ := filepath.Glob(filepath.Join(volume, "backups/shop/db/*"))
		want := []string{"full.json", "full.sql.gz"}
		var got []string
		for _, entry := range entries {
			got = append(got, filepath.Base(entry))
		}
		if !slices.Equal(got, want) {
			t.Errorf("the volume holds %v, want %v and no temporary file", got, want)
		}
	})
	t.Run("encrypted", env.encrypted)
	t.Run("a corrupt artifact is caught", env.corrupt)
	t.Run("prune deletes exactly the given keys", env.prune)
	t.Run("storage failures leave nothing", env.storageFailures)
	t.Run("a failed mysqldump leaves nothing and no lock", env.dumpFailures)
	t.Run("a long statement keeps the dump from locking", env.longStatement)
	t.Run("a held table lock makes the lock time out", env.lockTimeout)
	t.Run("a lock granted on a later attempt is released", env.lockOnLaterAttempt)
	t.Run("a transaction between two writes does not hold the lock off", env.transactionBetweenWrites)
	t.Run("command line", env.commandLine)
}

// roundTrip backs the source up to target, restores it into a new server as the MySQL images
// do, verifies it, then changes the restored server and expects verify to say what differs.
func (env *backupEnv) roundTrip(t *testing.T, target Target, creds Credentials) {
	env.dumpAndCheckManifest(t, target, creds)
	restored := startMariaDB(t)
	restored.exec(t, "CREATE DATABASE shop") // as the image's entrypoint does for its database
	out := filepath.Join(t.TempDir(), "restore.sql.gz")
	if _, err := Fetch(context.Background(), FetchOptions{Target: target, Credentials: creds, Out: out}); err != nil {
		t.Fatal(err)
	}
	restored.restore(t, out)
	requireSeedRestored(t, restored, env.blob)
	verify := VerifyOptions{Target: target, Credentials: creds, Connection: restored.rootConnection()}
	res, err := Verify(context.Background(), verify)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verified == nil || !*res.Verified || len(res.Mismatches) > 0 {
		t.Fatalf("verify of a faithful restore = %+v", res)
	}
	requireChangesFound(t, restored, verify)
}

// dumpAndCheckManifest dumps the source to target and checks what the result and the manifest
// say against the source itself.
func (env *backupEnv) dumpAndCheckManifest(t *testing.T, target Target, creds Credentials) {
	ctx := context.Background()
	res, err := Dump(ctx, DumpOptions{Target: target, Credentials: creds, Connection: env.source.backupConnection(),
		CompressLevel: DefaultCompressLevel})
	if err != nil {
		t.Fatal(err)
	}
	if res.Artifact != target.Key+artifactExtension || res.Size == 0 || len(res.SHA256) != 64 || res.Encrypted ||
		res.Databases != 2 || res.Tables != len(seededTables) || !strings.Contains(res.ServerVersion, "MariaDB") ||
		!strings.Contains(res.BinlogPosition, "binlog.") {
		t.Errorf("dump result = %+v", res)
	}
	store, err := openStorage(target, creds)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := readManifest(ctx, store, target.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got := manifestTables(manifest); !slices.Equal(got, seededTables) {
		t.Errorf("the manifest lists %v, want %v (views are not tables)", got, seededTables)
	}
	if want := sourceChecksums(t, env.source, "media", "shop"); !slices.Equal(manifest.Tables, want) {
		t.Errorf("the manifest's checksums %+v differ from the source's %+v", manifest.Tables, want)
	}
}

// requireChangesFound changes the restored server and expects verify to name each change.
func requireChangesFound(t *testing.T, restored *mariadb, verify VerifyOptions) {
	restored.exec(t,
		"DELETE FROM shop.orders WHERE id = 3",
		"UPDATE shop.customers SET note = 'changed' WHERE id = 2",
		"UPDATE media.files SET data = CONCAT(data, 'x') WHERE id = 1",
		"DROP TABLE shop.empty_table",
		"CREATE TABLE media.extra (id INT)",
		"CREATE DATABASE elsewhere", // not the backup's: ignored
		"CREATE TABLE elsewhere.t (id INT)",
	)
	res, err := Verify(context.Background(), verify)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verified == nil || *res.Verified {
		t.Fatalf("verify of a changed server = %+v", res)
	}
	mismatches := strings.Join(res.Mismatches, "\n")
	for _, want := range []string{"shop.orders: rows 3 != 2", "shop.customers: checksum", "media.files: checksum",
		"shop.empty_table: missing", "media.extra: not in the backup"} {
		if !strings.Contains(mismatches, want) {
			t.Errorf("mismatches %q lack %q", res.Mismatches, want)
		}
	}
	if len(res.Mismatches) != 5 {
		t.Errorf("mismatches = %q, want exactly 5", res.Mismatches)
	}
}

func (env *backupEnv) encrypted(t *testing.T) {
	ctx := context.Background()
	const passphrase = "correct horse battery staple"
	target, creds := env.s3.target("prod/shop/db/encrypted"), env.s3.credentials()
	res, err := Dump(ctx, DumpOptions{Target: target, Credentials: creds, Connection: env.source.backupConnection(),
		EncryptionKey: passphrase, CompressLevel: DefaultCompressLevel})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Encrypted || res.Artifact != target.Key+encryptedArtifactExtension {
		t.Fatalf("dump result = %+v", res)
	}
	stored, err := os.ReadFile(filepath.Join(env.s3.dir, env.s3.bucket, res.Artifact))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(stored), "age-encryption.org/v1\n") || strings.Contains(string(stored), nonASCII) {
		t.Fatal("the stored artifact is not an age file")
	}
	if _, err := os.Stat(filepath.Join(env.s3.dir, env.s3.bucket, target.Key+artifactExtension)); err == nil {
		t.Error("an unencrypted artifact was stored too")
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "restore.sql.gz")
	for _, tt := range []struct{ key, want string }{
		{"", EnvEncryptionKey},
		{"wrong passphrase", "does not decrypt with the passphrase"},
	} {
		res, err := Fetch(ctx, FetchOptions{Target: target, Credentials: creds, EncryptionKey: tt.key, Out: out})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), passphrase) {
			t.Errorf("fetch with key %q = %v, want an error naming %q", tt.key, err, tt.want)
		}
		if tt.key != "" && (res.Verified == nil || *res.Verified) {
			t.Errorf("fetch with a wrong key: verified = %v, want false", res.Verified)
		}
		requireNoFiles(t, dir)
	}

	if _, err := Fetch(ctx, FetchOptions{Target: target, Credentials: creds, EncryptionKey: passphrase, Out: out}); err != nil {
		t.Fatal(err)
	}
	restored := startMariaDB(t)
	restored.restore(t, out)
	requireSeedRestored(t, restored, env.blob)
	res, err = Verify(ctx, VerifyOptions{Target: target, Credentials: creds, Connection: restored.rootConnection()})
	if err != nil || res.Verified == nil || !*res.Verified {
		t.Fatalf("verify = %+v, %v", res, err)
	}
}

// corrupt flips one byte of stored artifacts, plain and encrypted, in the bucket and in a
// volume: fetch must refuse them, say so, and write nothing.
func (env *backupEnv) corrupt(t *testing.T) {
	ctx := context.Background()
	volume := t.TempDir()
	for _, tt := range []struct {
		name       string
		target     Target
		creds      Credentials
		passphrase string
		file       func(artifact string) string
		damage     func(t *testing.T, path string)
	}{
		{"s3", env.s3.target("corrupt/plain"), env.s3.credentials(), "",
			func(a string) string { return filepath.Join(env.s3.dir, env.s3.bucket, a) }, flipByte},
		{"s3 encrypted", env.s3.target("corrupt/encrypted"), env.s3.credentials(), "passphrase",
			func(a string) string { return filepath.Join(env.s3.dir, env.s3.bucket, a) }, flipByte},
		{"volume", Target{Volume: volume, Key: "corrupt/plain"}, Credentials{}, "",
			func(a string) string { return filepath.Join(volume, a) }, flipByte},
		{"volume truncated", Target{Volume: volume, Key: "corrupt/truncated"}, Credentials{}, "",
			func(a string) string { return filepath.Join(volume, a) }, truncate},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Dump(ctx, DumpOptions{Target: tt.target, Credentials: tt.creds,
				Connection: env.source.backupConnection(), EncryptionKey: tt.passphrase})
			if err != nil {
				t.Fatal(err)
			}
			tt.damage(t, tt.file(res.Artifact))
			dir := t.TempDir()
			res, err = Fetch(ctx, FetchOptions{Target: tt.target, Credentials: tt.creds, EncryptionKey: tt.passphrase,
				Out: filepath.Join(dir, "restore.sql.gz")})
			if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "is corrupt") {
				t.Errorf("fetch of a corrupt artifact = %v, want it called corrupt", err)
			}
			if res.Verified == nil || *res.Verified {
				t.Errorf("verified = %v, want false", res.Verified)
			}
			requireNoFiles(t, dir)
		})
	}
}

func (env *backupEnv) prune(t *testing.T) {
	ctx := context.Background()
	creds := env.s3.credentials()
	for _, key := range []string{"p/db/1", "p/db/2", "p/db/3"} {
		if _, err := Dump(ctx, DumpOptions{Target: env.s3.target(key), Credentials: creds,
			Connection: env.source.backupConnection()}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Dump(ctx, DumpOptions{Target: env.s3.target("p/db/4"), Credentials: creds,
		Connection: env.source.backupConnection(), Prune: []string{"p/db/1", "p/db/3", "p/db/never-existed", "p/db/4"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p/db/1", "p/db/3", "p/db/never-existed"}; !slices.Equal(res.Pruned, want) {
		t.Errorf("pruned = %v, want %v (never the backup just taken)", res.Pruned, want)
	}
	requireBucketHolds(t, env.s3, "p/", "p/db/2.json", "p/db/2.sql.gz", "p/db/4.json", "p/db/4.sql.gz")
}
