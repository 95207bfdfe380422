package backup

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

// archiveOptions are the inputs of archive.
type archiveOptions struct {
	Target      Target
	Credentials Credentials
	// Dir is the folder archived, such as a site's wp-content volume.
	Dir string
	// EncryptionKey, when set, is the passphrase the artifact is encrypted with.
	EncryptionKey string
	// CompressLevel is gzip's level, 0 (none) to 9 (smallest).
	CompressLevel int
	// Prune are the keys of content backups to delete once this one is complete.
	Prune []string
	// listing stands, in tests, for the listing of Dir's folders, which the files are then read
	// as: a folder that changes between the two.
	listing fs.FS
}

// archive writes a tar of o.Dir into the target: the artifact first, then its manifest; then it
// deletes the content backups of o.Prune. On failure the target's key holds no content backup.
func archive(ctx context.Context, o archiveOptions) (Result, error) {
	res := Result{Key: o.Target.Key}
	if err := validateWrite(o.Target.Key, o.Prune, o.CompressLevel); err != nil {
		return res, err
	}
	if o.Dir == "" {
		return res, fmt.Errorf("--%s is required", FlagDir)
	}
	store, err := openStorage(o.Target, o.Credentials)
	if err != nil {
		return res, err
	}
	if err := store.check(ctx); err != nil {
		return res, err
	}
	// Every read goes through the root, so that a symlink a site's user plants never makes the
	// archive read a file outside the folder.
	root, err := openFolder(o.Dir)
	if err != nil {
		return res, err
	}
	defer root.Close()
	var m *contentManifest
	err = replaceBackup(ctx, store, contentObjects(o.Target.Key), func() (err error) {
		m, err = o.archive(ctx, store, root)
		return err
	})
	if err != nil {
		return res, err
	}
	res = m.result()
	pruned, err := prune(ctx, store, o.Target.Key, o.Prune, contentObjects)
	res.Pruned = pruned
	if err != nil {
		return res, fmt.Errorf("the backup is complete, but pruning older backups failed: %w", err)
	}
	return res, nil
}

// archive streams the tar of root into the store, then writes the manifest.
func (o *archiveOptions) archive(ctx context.Context, store storage, root *os.Root) (*contentManifest, error) {
	encrypted := o.EncryptionKey != ""
	artifact := contentArtifactKey(o.Target.Key, encrypted)
	created := time.Now().UTC()
	var counts treeCounts
	listing := o.listing
	if listing == nil {
		listing = root.FS()
	}
	src := produced(func(w io.Writer) (err error) {
		counts, err = writeTree(w, root, listing, o.Dir)
		return err
	})
	// storeArtifact returns only once the walk has returned, so counts is written by then.
	s, err := storeArtifact(ctx, store, artifact, src, o.CompressLevel, o.EncryptionKey)
	if err != nil {
		return nil, err
	}
	if err := checkStored(ctx, store, artifact, s); err != nil {
		return nil, err
	}
	m := &contentManifest{
		FormatVersion: contentManifestFormatVersion, Key: o.Target.Key, Artifact: artifact,
		Size: s.size, SHA256: s.sha256, Encrypted: encrypted, Format: "tar", Compression: "gzip",
		Files: counts.files, Bytes: counts.bytes, Created: created,
	}
	if err := putJSON(ctx, store, contentManifestKey(o.Target.Key), m); err != nil {
		return nil, err
	}
	return m, nil
}

// openFolder opens dir, which must be an existing folder, as a root.
func openFolder(dir string) (*os.Root, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open --%s %s: %w", FlagDir, dir, describeReadError(err))
	}
	return root, nil
}

// describeReadError is describeFileError for a file that is read: a refusal is the Job's user's,
// which the folder's owner did not let read it.
func describeReadError(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("permission denied: the Job's user cannot read it (%w)", err)
	}
	return describeFileError(err)
}

// treeCounts are the regular files archived and their total size.
type treeCounts struct {
	files int
	bytes int64
}

// reservedName tells the top-level entries that are not the folder's content: the file
// system's lost+found, which mkfs makes on a new volume and only root may read, and extract's
// temporary folders.
func reservedName(name string) bool {
	return name == "lost+found" || strings.HasPrefix(name, extractPrefix)
}

// writeTree writes the tar of root, whose folders listing lists, to w. Entries are named by their slash-separated path in the
// folder, each folder before what it holds. Only regular files, folders and symlinks are
// archived: sockets, pipes and devices are not content. Hard links are archived as separate
// files.
func writeTree(w io.Writer, root *os.Root, listing fs.FS, dir string) (treeCounts, error) {
	var counts treeCounts
	tw := tar.NewWriter(w)
	err := fs.WalkDir(listing, ".", func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && name != "." && errors.Is(err, fs.ErrNotExist):
			return nil // a folder removed while it was walked: its entry is already written
		case err != nil:
			return fmt.Errorf("cannot read %s in %s: %w", name, dir, describeReadError(err))
		case name == ".":
			return nil // the folder itself is the volume's mount: its mode is not content
		case path.Dir(name) == "." && reservedName(name):
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		err = writeEntry(tw, root, name, &counts)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since the folder was listed: a live site's file
		}
		if err != nil {
			return fmt.Errorf("cannot archive %s in %s: %w", name, dir, describeReadError(err))
		}
		return nil
	})
	if err != nil {
		return counts, err
	}
	return counts, tw.Close()
}

// writeEntry writes the header of name, and its content when it is a regular file.
func writeEntry(tw *tar.Writer, root *os.Root, name string, counts *treeCounts) error {
	info, err := root.Lstat(name)
	if err != nil {
		return err
	}
	// tar would round the times to the second; truncating keeps a file's time from moving ahead.
	hdr := &tar.Header{Name: name, Mode: int64(info.Mode().Perm()), ModTime: info.ModTime().Truncate(time.Second)}
	switch info.Mode().Type() {
	case fs.ModeDir:
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
	case fs.ModeSymlink:
		if hdr.Linkname, err = root.Readlink(name); err != nil {
			return err
		}
		hdr.Typeflag = tar.TypeSymlink
	case 0:
		return writeFile(tw, root, name, counts)
	default:
		return nil
	}
	return tw.WriteHeader(hdr)
}

// writeFile writes a regular file. Its header is made from the open file, so that it describes
// what is read even when the name was replaced since it was listed.
func writeFile(tw *tar.Writer, root *os.Root, name string, counts *treeCounts) error {
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil // it was replaced by something else since it was listed
	}
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg, Name: name, Size: info.Size(),
		Mode: int64(info.Mode().Perm()), ModTime: info.ModTime().Truncate(time.Second),
	}); err != nil {
		return err
	}
	if err := copyExactly(tw, f, info.Size()); err != nil {
		return err
	}
	counts.files++
	counts.bytes += info.Size()
	return nil
}

// copyExactly copies size bytes of r to w. A file that shrinks while it is read is padded with
// zeros to the size its header gave, and one that grows is cut to it, as tar does: the archive
// stays whole, and the next backup has the file as it ends up.
func copyExactly(w io.Writer, r io.Reader, size int64) error {
	n, err := io.Copy(w, io.LimitReader(r, size))
	if err != nil {
		return err
	}
	_, err = io.CopyN(w, zeros{}, size-n)
	return err
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
