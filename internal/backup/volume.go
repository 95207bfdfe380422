package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// volumeStorage keeps objects as files under a folder, the mount of a volume claim. Keys are
// paths relative to it.
type volumeStorage struct {
	root string
}

func newVolumeStorage(root string) (*volumeStorage, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("--%s %q is not an absolute path", flagVolume, root)
	}
	return &volumeStorage{root: filepath.Clean(root)}, nil
}

func (v *volumeStorage) check(context.Context) error {
	info, err := os.Stat(v.root)
	if err != nil {
		return fmt.Errorf("the backup volume at %s cannot be used: %w", v.root, describeFileError(err))
	}
	if !info.IsDir() {
		return fmt.Errorf("the backup volume at %s is not a folder", v.root)
	}
	return nil
}

func (v *volumeStorage) path(key string) (string, error) {
	if err := validateKey(key); err != nil {
		return "", err
	}
	return filepath.Join(v.root, filepath.FromSlash(key)), nil
}

// put writes a temporary file beside the destination and renames it once its content is synced,
// so that a crash or a failed stream never leaves a partial file at key, and a reader never sees
// one.
func (v *volumeStorage) put(_ context.Context, key string, r io.Reader, _ int64) (err error) {
	dest, err := v.path(key)
	if err != nil {
		return err
	}
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return v.fileError("create the folder of "+key, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return v.fileError("create "+key, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	w := &recordingWriter{w: tmp}
	if _, err := io.Copy(w, r); err != nil {
		if w.err != nil {
			return v.fileError("write "+key, w.err)
		}
		return err // the stream's own error, such as a failed dump
	}
	if err := tmp.Chmod(0o644); err != nil {
		return v.fileError("write "+key, err)
	}
	if err := tmp.Sync(); err != nil {
		return v.fileError("write "+key, err)
	}
	if err := tmp.Close(); err != nil {
		return v.fileError("write "+key, err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return v.fileError("rename "+key, err)
	}
	// The rename is durable only once the folder is synced.
	return syncDir(dir)
}

func (v *volumeStorage) get(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := v.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", key, errNotFound)
	}
	if err != nil {
		return nil, v.fileError("read "+key, err)
	}
	return f, nil
}

func (v *volumeStorage) stat(_ context.Context, key string) (int64, error) {
	p, err := v.path(key)
	if err != nil {
		return 0, err
	}
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%s: %w", key, errNotFound)
	}
	if err != nil {
		return 0, v.fileError("read "+key, err)
	}
	return info.Size(), nil
}

func (v *volumeStorage) delete(_ context.Context, key string) error {
	p, err := v.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return v.fileError("delete "+key, err)
	}
	return nil
}

func (v *volumeStorage) fileError(what string, err error) error {
	return fmt.Errorf("cannot %s in the backup volume at %s: %w", what, v.root, describeFileError(err))
}

// describeFileError names the causes a person can act on.
func describeFileError(err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("the volume is full (%w)", err)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("the volume is mounted read-only (%w)", err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied: the Job's user cannot write there (%w)", err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("it does not exist (%w)", err)
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return syncOpenFolder(d)
}

func syncOpenFolder(d *os.File) error {
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		// Some file systems cannot sync a folder; the data is synced all the same.
		return err
	}
	return nil
}

// recordingWriter keeps its writer's error, to tell a full volume from a failed stream.
type recordingWriter struct {
	w   io.Writer
	err error
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err != nil {
		r.err = err
	}
	return n, err
}

// list walks the folder of prefix; the temporary files of writes in progress are not objects.
func (v *volumeStorage) list(_ context.Context, prefix string) ([]string, error) {
	dir, err := v.path(prefix)
	if err != nil {
		return nil, err
	}
	var keys []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(v.root, p)
		if err != nil {
			return err
		}
		keys = append(keys, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, v.fileError("list "+prefix, err)
	}
	return keys, nil
}

func (v *volumeStorage) listFolder(_ context.Context, prefix string) ([]string, error) {
	dir, err := v.path(prefix)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, v.fileError("list "+prefix, err)
	}
	var keys []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			keys = append(keys, prefix+"/"+e.Name())
		}
	}
	return keys, nil
}
