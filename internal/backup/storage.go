package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Storage holds a backup's objects: the artifact and its manifest.
type Storage interface {
	// Check tells, before any work, whether the storage can be reached with the credentials given
	// and the bucket or folder exists, so that a dump fails before it locks the server.
	Check(ctx context.Context) error
	// Put stores everything r yields at key; size is its length, or -1 when it is not known in
	// advance (a dump's). It is all or nothing: when r fails, or the write does, nothing is left
	// at key (an object that was there before is kept).
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Get streams the object at key; ErrNotFound when there is none.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Stat returns the size of the object at key; ErrNotFound when there is none.
	Stat(ctx context.Context, key string) (int64, error)
	// Delete removes the object at key; a missing object is not an error.
	Delete(ctx context.Context, key string) error
}

// ErrNotFound is returned for an object that does not exist.
var ErrNotFound = errors.New("no such object")

// Credentials are the secrets a subcommand reads from its environment.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

// OpenStorage returns the storage of the target: its bucket, or its folder.
func OpenStorage(t Target, creds Credentials) (Storage, error) {
	switch {
	case t.S3Endpoint != "" && t.Volume != "":
		return nil, fmt.Errorf("give either --%s or --%s, not both", FlagS3Endpoint, FlagVolume)
	case t.S3Endpoint != "":
		return newS3Storage(t, creds)
	case t.Volume != "":
		return newVolumeStorage(t.Volume)
	}
	return nil, fmt.Errorf("give the storage: --%s and --%s, or --%s", FlagS3Endpoint, FlagS3Bucket, FlagVolume)
}

// ValidateKey refuses keys that could name something outside the bucket's prefix or the
// volume's folder.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return errors.New("the key is empty")
	case strings.HasPrefix(key, "/"):
		return fmt.Errorf("the key %q is absolute", key)
	case strings.HasSuffix(key, "/"):
		return fmt.Errorf("the key %q ends with /", key)
	case strings.ContainsRune(key, 0):
		return fmt.Errorf("the key %q holds a NUL byte", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == ".." {
			return fmt.Errorf("the key %q climbs out with a .. part", key)
		}
	}
	if path.Clean(key) != key {
		return fmt.Errorf("the key %q is not clean (empty or . parts)", key)
	}
	return nil
}

// deleteBackup deletes every object of the backup at key: the manifest first, so that a backup
// is never listed whose artifact is already gone, then either artifact.
func deleteBackup(ctx context.Context, store Storage, key string) error {
	for _, object := range []string{ManifestKey(key), ArtifactKey(key, false), ArtifactKey(key, true)} {
		if err := store.Delete(ctx, object); err != nil {
			return err
		}
	}
	return nil
}
