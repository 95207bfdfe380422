package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"
)

// storage holds a backup's objects: the artifact and its manifest.
type storage interface {
	// check tells, before any work, whether the storage can be reached with the credentials given
	// and the bucket or folder exists, so that a dump fails before it locks the server.
	check(ctx context.Context) error
	// put stores everything r yields at key; size is its length, or -1 when it is not known in
	// advance (a dump's). It is all or nothing: when r fails, or the write does, nothing is left
	// at key (an object that was there before is kept).
	put(ctx context.Context, key string, r io.Reader, size int64) error
	// get streams the object at key; errNotFound when there is none.
	get(ctx context.Context, key string) (io.ReadCloser, error)
	// stat returns the size of the object at key; errNotFound when there is none.
	stat(ctx context.Context, key string) (int64, error)
	// delete removes the object at key; a missing object is not an error.
	delete(ctx context.Context, key string) error
	// list returns the keys of the objects below the folder prefix, in no given order; none when
	// there is no such folder.
	list(ctx context.Context, prefix string) ([]string, error)
	// listFolder returns the keys of the objects directly in the folder prefix, not in its
	// sub-folders; none when there is no such folder.
	listFolder(ctx context.Context, prefix string) ([]string, error)
}

// errNotFound is returned for an object that does not exist.
var errNotFound = errors.New("no such object")

// Credentials are the secrets a subcommand reads from its environment.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

// openStorage returns the storage of the target: its bucket, or its folder.
func openStorage(t Target, creds Credentials) (storage, error) {
	switch {
	case t.S3Endpoint != "" && t.Volume != "":
		return nil, fmt.Errorf("give either --%s or --%s, not both", flagS3Endpoint, flagVolume)
	case t.S3Endpoint != "":
		return newS3Storage(t, creds)
	case t.Volume != "":
		return newVolumeStorage(t.Volume)
	}
	return nil, fmt.Errorf("give the storage: --%s and --%s, or --%s", flagS3Endpoint, flagS3Bucket, flagVolume)
}

// validateKey refuses keys that could name something outside the bucket's prefix or the
// volume's folder.
func validateKey(key string) error {
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

// sqlObjects are the objects of the database backup at key, its manifest first.
func sqlObjects(key string) []string {
	return []string{manifestKey(key), ArtifactKey(key, false), ArtifactKey(key, true)}
}

// deleteObjects deletes objects in order. Every list names the manifest first, so that a backup
// is never listed whose artifact is already gone.
func deleteObjects(ctx context.Context, store storage, objects []string) error {
	for _, object := range objects {
		if err := store.delete(ctx, object); err != nil {
			return err
		}
	}
	return nil
}

// replaceBackup runs write, which stores a backup's artifact and then its manifest, in place of
// the objects the key held. They are deleted first, so that no manifest describes the key until
// the new backup is whole, and again when write fails, so that a failure leaves nothing behind.
func replaceBackup(ctx context.Context, store storage, objects []string, write func() error) error {
	if err := deleteObjects(ctx, store, objects); err != nil {
		return err
	}
	err := write()
	if err != nil {
		// The work may have been cancelled (SIGTERM); the cleanup must still run.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if cleanupErr := deleteObjects(cleanup, store, objects); cleanupErr != nil {
			err = fmt.Errorf("%w; removing what was written also failed: %w", err, cleanupErr)
		}
	}
	return err
}

// prune deletes the backups of keys, never the one just written, and returns those it deleted
// (a key that held nothing counts: retention wants it gone, and it is). objects names what a
// backup of this kind keeps at a key.
func prune(ctx context.Context, store storage, current string, keys []string, objects func(key string) []string) ([]string, error) {
	var pruned []string
	for _, key := range keys {
		if key == current {
			continue
		}
		if err := deleteObjects(ctx, store, objects(key)); err != nil {
			return pruned, fmt.Errorf("%s: %w", key, err)
		}
		pruned = append(pruned, key)
	}
	return pruned, nil
}
