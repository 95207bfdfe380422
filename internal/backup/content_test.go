package backup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// contentEnv is one object store and one site's wp-content, shared by the scenarios of
// TestContent.
type contentEnv struct {
	s3   *s3Server
	site string
	want map[string]treeEntry
}

func TestContent(t *testing.T) {
	env := &contentEnv{s3: startVersityGW(t, nil), site: makeSite(t)}
	env.want = readTree(t, env.site)

	t.Run("to S3 and back", func(t *testing.T) {
		env.roundTrip(t, env.s3.target("sites/blog/wp/1"), env.s3.credentials())
	})
	t.Run("to a volume and back", func(t *testing.T) {
		volume := tempDir(t)
		env.roundTrip(t, Target{Volume: volume, Key: "sites/blog/wp/1"}, Credentials{})
		entries, _ := filepath.Glob(filepath.Join(volume, "sites/blog/wp/*"))
		want := []string{"1.content.json", "1.content.tar.gz"}
		var got []string
		for _, entry := range entries {
			got = append(got, filepath.Base(entry))
		}
		if !slices.Equal(got, want) {
			t.Errorf("the volume holds %v, want %v and no temporary file", got, want)
		}
	})
	t.Run("encrypted", env.encrypted)
	t.Run("a corrupt archive is refused", env.corrupt)
	t.Run("entries outside the folder are refused", env.escapes)
	t.Run("unless-nonempty", env.unlessNonEmpty)
	t.Run("an interrupted extraction", env.interrupted)
	t.Run("lost+found and extract's folders are not content", env.notContent)
	t.Run("prune deletes exactly the given keys", env.prune)
	t.Run("a folder that changes while it is archived", env.changing)
	t.Run("a failure leaves nothing", env.failure)
	t.Run("command line", env.commandLine)
}

// archive archives the site to target, and fails the test when it cannot.
func (env *contentEnv) archive(t *testing.T, o archiveOptions) Result {
	t.Helper()
	if o.Dir == "" {
		o.Dir = env.site
	}
	res, err := archive(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// roundTrip archives the site, checks what the result and the manifest say, extracts it into
// an empty folder and expects the same tree.
func (env *contentEnv) roundTrip(t *testing.T, target Target, creds Credentials) {
	ctx := context.Background()
	start := time.Now().Add(-time.Second)
	res := env.archive(t, archiveOptions{Target: target, Credentials: creds, CompressLevel: DefaultCompressLevel})
	files, size := siteCounts()
	if res.Key != target.Key || res.Artifact != target.Key+contentArtifactExtension || res.Encrypted ||
		res.Files != files || res.Bytes != size || res.Size == 0 || len(res.SHA256) != 64 {
		t.Fatalf("archive result = %+v, want %d files of %d bytes", res, files, size)
	}
	store, err := openStorage(target, creds)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readContentManifest(ctx, store, target.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Created.After(start) || m.Format != "tar" || m.Compression != "gzip" {
		t.Errorf("manifest = %+v", m)
	}
	if got := m.result(); got.Files != res.Files || got.Bytes != res.Bytes || got.SHA256 != res.SHA256 || got.Size != res.Size {
		t.Errorf("the manifest says %+v, the archive reported %+v", got, res)
	}
	out := tempDir(t)
	got, err := extract(ctx, extractOptions{Target: target, Credentials: creds, Dir: out})
	if err != nil {
		t.Fatal(err)
	}
	if got.Artifact != res.Artifact || got.SHA256 != res.SHA256 || got.Files != files || got.Bytes != size || got.Verified != nil {
		t.Errorf("extract result = %+v, archive's %+v", got, res)
	}
	requireSameTree(t, readTree(t, out), env.want)
}

func (env *contentEnv) encrypted(t *testing.T) {
	ctx := context.Background()
	const passphrase = "correct horse battery staple"
	target, creds := env.s3.target("sites/blog/wp/encrypted"), env.s3.credentials()
	res := env.archive(t, archiveOptions{Target: target, Credentials: creds, EncryptionKey: passphrase})
	if !res.Encrypted || res.Artifact != target.Key+encryptedContentArtifactExtension {
		t.Fatalf("archive result = %+v", res)
	}
	stored, err := os.ReadFile(filepath.Join(env.s3.dir, env.s3.bucket, res.Artifact))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(stored), "age-encryption.org/v1\n") || strings.Contains(string(stored), nonASCII) {
		t.Fatal("the stored artifact is not an age file")
	}
	requireBucketHolds(t, env.s3, target.Key, contentManifestKey(target.Key), res.Artifact)

	for _, tt := range []struct {
		key, want string
		corrupt   bool
	}{
		{"", EnvEncryptionKey, false},
		{"wrong passphrase", "does not decrypt with the passphrase", true},
	} {
		out := tempDir(t)
		res, err := extract(ctx, extractOptions{Target: target, Credentials: creds, EncryptionKey: tt.key, Dir: out})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), passphrase) ||
			errors.Is(err, errCorrupt) != tt.corrupt {
			t.Errorf("extract with key %q = %v, want an error naming %q", tt.key, err, tt.want)
		}
		if tt.corrupt && (res.Verified == nil || *res.Verified) {
			t.Errorf("extract with a wrong key: verified = %v, want false", res.Verified)
		}
		requireEmpty(t, out)
	}

	out := tempDir(t)
	if _, err := extract(ctx, extractOptions{Target: target, Credentials: creds, EncryptionKey: passphrase, Dir: out}); err != nil {
		t.Fatal(err)
	}
	requireSameTree(t, readTree(t, out), env.want)
}

// corrupt damages stored archives, plain and encrypted, in the bucket and in a volume: extract
// must refuse them, say so, and leave the folder empty, although a flipped byte inside a file's
// data is only told by the checksum, once that file is already extracted.
func (env *contentEnv) corrupt(t *testing.T) {
	ctx := context.Background()
	volume := tempDir(t)
	inBucket := func(a string) string { return filepath.Join(env.s3.dir, env.s3.bucket, a) }
	inVolume := func(a string) string { return filepath.Join(volume, a) }
	for _, tt := range []struct {
		name       string
		target     Target
		creds      Credentials
		passphrase string
		file       func(artifact string) string
		damage     func(t *testing.T, path string)
	}{
		{"s3", env.s3.target("corrupt/plain"), env.s3.credentials(), "", inBucket, flipByte},
		{"s3 encrypted", env.s3.target("corrupt/encrypted"), env.s3.credentials(), "passphrase", inBucket, flipByte},
		{"volume", Target{Volume: volume, Key: "corrupt/plain"}, Credentials{}, "", inVolume, flipByte},
		{"volume truncated", Target{Volume: volume, Key: "corrupt/truncated"}, Credentials{}, "", inVolume, truncate},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := env.archive(t, archiveOptions{Target: tt.target, Credentials: tt.creds, EncryptionKey: tt.passphrase})
			tt.damage(t, tt.file(res.Artifact))
			out := tempDir(t)
			res, err := extract(ctx, extractOptions{Target: tt.target, Credentials: tt.creds, EncryptionKey: tt.passphrase, Dir: out})
			if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "is corrupt") {
				t.Errorf("extract of a corrupt archive = %v, want it called corrupt", err)
			}
			if res.Verified == nil || *res.Verified {
				t.Errorf("verified = %v, want false", res.Verified)
			}
			requireEmpty(t, out)
		})
	}
}

// escapes stores archives whose entries would write outside the folder, directly or through a
// symlink, with manifests that vouch for them: extract refuses each, writes nothing outside and
// leaves the folder empty, although entries before the bad one were extracted.
func (env *contentEnv) escapes(t *testing.T) {
	ctx := context.Background()
	target, creds := env.s3.target("crafted/x"), env.s3.credentials()
	store, err := openStorage(target, creds)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range escapingArchives() {
		t.Run(tt.name, func(t *testing.T) {
			parent := tempDir(t)
			site, outside := filepath.Join(parent, "site"), filepath.Join(parent, "outside")
			for _, d := range []string{site, outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			putCrafted(t, store, target.Key, tt.entries(outside))
			res, err := extract(ctx, extractOptions{Target: target, Credentials: creds, Dir: site})
			if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("extract = %v, want it refused as %q", err, tt.want)
			}
			if res.Verified == nil || *res.Verified {
				t.Errorf("verified = %v, want false", res.Verified)
			}
			requireEmpty(t, site)
			requireEmpty(t, outside)
			if entries, _ := os.ReadDir(parent); len(entries) != 2 {
				t.Errorf("the folder's parent holds %d entries, want site and outside", len(entries))
			}
		})
	}
}

// escapingArchive is an archive whose entries, given the path of a folder beside the one
// extracted into, would write outside it; want is what extract's refusal says.
type escapingArchive struct {
	name    string
	entries func(outside string) []craftedEntry
	want    string
}

func escapingArchives() []escapingArchive {
	ok := file("index.php", "<?php")
	return []escapingArchive{
		{"a parent path", func(string) []craftedEntry { return []craftedEntry{ok, file("../outside/escape", "x")} },
			"outside the folder"},
		{"a parent path inside a path", func(string) []craftedEntry {
			return []craftedEntry{ok, dir("a/"), file("a/../../outside/escape", "x")}
		}, "outside the folder"},
		{"an absolute path", func(outside string) []craftedEntry {
			return []craftedEntry{ok, file(filepath.Join(outside, "escape"), "x")}
		}, "outside the folder"},
		{"through a symlink to the parent", func(string) []craftedEntry {
			return []craftedEntry{ok, symlink("up", ".."), file("up/outside/escape", "x")}
		}, "not in a folder the archive holds"},
		{"through an absolute symlink", func(outside string) []craftedEntry {
			return []craftedEntry{ok, symlink("out", outside), file("out/escape", "x")}
		}, "not in a folder the archive holds"},
		{"over a symlink", func(outside string) []craftedEntry {
			return []craftedEntry{ok, symlink("wp-config.php", filepath.Join(outside, "escape")), file("wp-config.php", "x")}
		}, "holds \"wp-config.php\" twice"},
		{"a folder over a symlink", func(outside string) []craftedEntry {
			return []craftedEntry{ok, symlink("d", outside), dir("d/"), file("d/escape", "x")}
		}, "holds \"d/\" twice"},
		{"a hard link", func(outside string) []craftedEntry {
			hard := craftedEntry{hdr: file("hard", "").hdr}
			hard.hdr.Typeflag, hard.hdr.Linkname = '1', filepath.Join(outside, "escape")
			return []craftedEntry{ok, hard}
		}, "of a type extract does not restore"},
		{"a name extract keeps for itself", func(string) []craftedEntry {
			return []craftedEntry{ok, dir(extractedName + "/"), file(extractedName+"/x", "x")}
		}, "keeps for itself"},
	}
}
