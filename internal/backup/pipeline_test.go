package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/minio/minio-go/v7"
)

// generatedDump stands for mysqldump's output: size incompressible bytes, then the exit status
// exit.
type generatedDump struct {
	io.Reader
	exit    error
	aborted bool
}

func newGeneratedDump(size int64, exit error) *generatedDump {
	return &generatedDump{Reader: io.LimitReader(rand.NewChaCha8([32]byte{1}), size), exit: exit}
}

func (g *generatedDump) wait() error { return g.exit }
func (g *generatedDump) abort()      { g.aborted = true }

// generatedSum is the SHA-256 of what newGeneratedDump(size, …) yields.
func generatedSum(t *testing.T, size int64) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, newGeneratedDump(size, nil)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestStoreArtifactInParts streams dumps larger than one upload part into a real bucket: the
// object is what was hashed, it decompresses (and decrypts) to the dump, and a dump that fails
// after several parts leaves neither an object nor an upload behind.
func TestStoreArtifactInParts(t *testing.T) {
	s3 := startVersityGW(t, nil)
	ctx := context.Background()
	store, err := openStorage(s3.target("parts/x"), s3.credentials())
	if err != nil {
		t.Fatal(err)
	}
	const size = 2*s3PartSize + 12345
	want := generatedSum(t, size)
	for _, passphrase := range []string{"", "passphrase"} {
		got, err := storeArtifact(ctx, store, "parts/ok", newGeneratedDump(size, nil), DefaultCompressLevel, passphrase)
		if err != nil {
			t.Fatal(err)
		}
		object, err := store.get(ctx, "parts/ok")
		if err != nil {
			t.Fatal(err)
		}
		stored := newHashingReader(object)
		plain, err := decryptingReader(stored, passphrase != "", passphrase)
		if err != nil {
			t.Fatal(err)
		}
		gz, err := gzip.NewReader(plain)
		if err != nil {
			t.Fatal(err)
		}
		dump := sha256.New()
		if _, err := io.Copy(dump, gz); err != nil {
			t.Fatal(err)
		}
		_ = object.Close()
		if stored.n != got.size || stored.sum() != got.sha256 || hex.EncodeToString(dump.Sum(nil)) != want {
			t.Errorf("encrypted=%v: stored %d bytes %s, reported %d bytes %s; the dump came back changed: %v",
				passphrase != "", stored.n, stored.sum(), got.size, got.sha256, hex.EncodeToString(dump.Sum(nil)) != want)
		}
	}

	failed := errors.New("mysqldump failed (exit status 2): Lost connection")
	if _, err := storeArtifact(ctx, store, "parts/failed", newGeneratedDump(size, failed), DefaultCompressLevel, ""); !errors.Is(err, failed) {
		t.Errorf("storeArtifact of a failed dump = %v, want its error", err)
	}
	if _, err := store.stat(ctx, "parts/failed"); !errors.Is(err, errNotFound) {
		t.Errorf("a failed dump left an object: %v", err)
	}
	for upload := range s3.client.ListIncompleteUploads(ctx, s3.bucket, "parts/", true) {
		if upload.Err == nil {
			t.Errorf("an upload was left incomplete: %s", upload.Key)
		}
	}
	requireBucketHolds(t, s3, "parts/", "parts/ok")
}

func requireBucketHolds(t *testing.T, s *s3Server, prefix string, want ...string) {
	t.Helper()
	var got []string
	for object := range s.client.ListObjects(context.Background(), s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if object.Err != nil {
			t.Fatal(object.Err)
		}
		got = append(got, object.Key)
	}
	if !slices.Equal(sortedCopy(got), want) {
		t.Errorf("the bucket holds %v under %s, want %v", got, prefix, want)
	}
}
