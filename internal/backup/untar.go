package backup

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// extractor writes the entries of an archive into root, a temporary folder. Beyond what os.Root
// already refuses (a path that leaves root, through .. or a symlink), it writes an entry only
// into a folder the archive made before it, so never through a symlink or into a file, and never
// twice at one name: an archive that needs any of that was not written by archive, and its
// entries are not trusted.
type extractor struct {
	root *os.Root
	// dir is the folder being filled, for messages.
	dir string
	// dirs are the folders extracted so far, "." for root.
	dirs map[string]bool
	// folders get their modes and times once everything in them is written.
	folders []folder
}

type folder struct {
	name  string
	perm  fs.FileMode
	mtime time.Time
}

// extract writes the entries of the gzip-compressed tar r. Its errors are the archive's fault,
// except writeErrors, which are the folder's.
func (x *extractor) extract(r io.Reader) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("the archive is not gzip-compressed: %w", err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("the archive is not a valid tar: %w", err)
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	// Read to the end, so that gzip checks its checksum and decryption its last chunk.
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return fmt.Errorf("the archive's compression is not valid: %w", err)
	}
	return nil
}

// entry writes one entry, whose content, for a regular file, is r.
func (x *extractor) entry(hdr *tar.Header, r io.Reader) error {
	name := path.Clean(hdr.Name)
	switch {
	case name == "." && hdr.Typeflag == tar.TypeDir:
		return nil // the folder itself, as `tar -C DIR .` writes it: DIR is the volume's mount
	case name == "." || name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name):
		return fmt.Errorf("the archive's entry %q is outside the folder it is extracted into", hdr.Name)
	case path.Dir(name) == "." && reservedName(name):
		return fmt.Errorf("the archive's entry %q has a name extract keeps for itself", hdr.Name)
	case !x.dirs[path.Dir(name)]:
		return fmt.Errorf("the archive's entry %q is not in a folder the archive holds before it", hdr.Name)
	}
	perm := fs.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := x.root.Mkdir(name, 0o700); err != nil {
			return x.fileError(hdr.Name, err)
		}
		x.dirs[name] = true
		x.folders = append(x.folders, folder{name: name, perm: perm, mtime: hdr.ModTime})
		return nil
	case tar.TypeReg:
		return x.writeFile(hdr.Name, name, perm, hdr.ModTime, r)
	case tar.TypeSymlink:
		if hdr.Linkname == "" {
			return fmt.Errorf("the archive's symlink %q has no target", hdr.Name)
		}
		// The target is not checked: it is the site's, and nothing here writes through it.
		// A symlink keeps the time of its extraction.
		return x.fileError(hdr.Name, x.root.Symlink(hdr.Linkname, name))
	}
	return fmt.Errorf("the archive's entry %q is of a type extract does not restore (%q)", hdr.Name, hdr.Typeflag)
}

// writeFile writes a regular file, synced, so that a restored site never finds it empty after a
// crash once it is moved into place.
func (x *extractor) writeFile(entry, name string, perm fs.FileMode, mtime time.Time, r io.Reader) (err error) {
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return x.fileError(entry, err)
	}
	defer func() {
		if closeErr := f.Close(); err == nil && closeErr != nil {
			err = x.fileError(entry, closeErr)
		}
	}()
	_, err = io.Copy(&writerOf{w: f, path: path.Join(x.dir, name)}, r)
	var written *writeError
	switch {
	case errors.As(err, &written):
		return err
	case err != nil:
		return fmt.Errorf("the archive's entry %q cannot be read: %w", entry, err)
	}
	// Chmod, unlike the mode given at creation, is not masked by the umask.
	if err := f.Chmod(perm); err != nil {
		return x.fileError(entry, err)
	}
	if err := f.Sync(); err != nil {
		return x.fileError(entry, err)
	}
	return x.fileError(entry, x.root.Chtimes(name, mtime, mtime))
}

// fileError classifies an error of the file system: a name that already exists is the
// archive's fault, anything else the folder's.
func (x *extractor) fileError(entry string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("the archive holds %q twice", entry)
	}
	return &writeError{fmt.Errorf("cannot write %s in %s: %w", entry, x.dir, describeFileError(err))}
}

// finishFolders gives the extracted folders their modes and times, deepest first: writing into
// a folder changes its time, and a folder without write or search permission would keep what
// it holds from being finished. Each is synced first, so that its entries are durable once it
// is moved into place.
func (x *extractor) finishFolders() error {
	for i := len(x.folders) - 1; i >= 0; i-- {
		f := x.folders[i]
		err := syncFolder(x.root, f.name)
		if err == nil {
			err = x.root.Chmod(f.name, f.perm)
		}
		if err == nil {
			err = x.root.Chtimes(f.name, f.mtime, f.mtime)
		}
		if err != nil {
			return fmt.Errorf("cannot write %s in %s: %w", f.name, x.dir, describeFileError(err))
		}
	}
	if err := syncFolder(x.root, "."); err != nil {
		return fmt.Errorf("cannot write in %s: %w", x.dir, describeFileError(err))
	}
	return nil
}
