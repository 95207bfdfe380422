package backup

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// extractOptions are the inputs of extract.
type extractOptions struct {
	Target      Target
	Credentials Credentials
	// EncryptionKey is the passphrase of an encrypted backup.
	EncryptionKey string
	// Dir is the folder the archive is extracted into; it must exist and be empty.
	Dir string
	// UnlessNonEmpty makes a folder that already holds an entry a reason to do nothing rather
	// than an error: the site is restarting, or its volume has data of its own.
	UnlessNonEmpty bool
}

// Temporary folders of extract, inside the folder it fills, so that moving their entries into
// place is a rename on the same file system. A folder named extractPrefix plus a random suffix
// is being written; extractedName holds entries extracted and verified, not all moved yet.
const (
	extractPrefix = ".appkeeper-extract"
	extractedName = extractPrefix + "ed"
)

// extract checks the target's content backup against its manifest and extracts it into o.Dir.
// o.Dir is filled only once the whole archive is extracted and verified: on failure it is left
// as it was. One extract at a time may fill a folder.
func extract(ctx context.Context, o extractOptions) (Result, error) {
	res := Result{Key: o.Target.Key}
	if err := validateKey(o.Target.Key); err != nil {
		return res, fmt.Errorf("--%s: %w", flagKey, err)
	}
	if o.Dir == "" {
		return res, fmt.Errorf("--%s is required", FlagDir)
	}
	root, err := openFolder(o.Dir)
	if err != nil {
		return res, err
	}
	defer root.Close()
	proceed, err := prepareFolder(root, o.Dir, o.UnlessNonEmpty)
	if err != nil || !proceed {
		return res, err
	}
	store, err := openStorage(o.Target, o.Credentials)
	if err != nil {
		return res, err
	}
	m, err := readContentManifest(ctx, store, o.Target.Key)
	if err != nil {
		return res, err
	}
	res = m.result()
	res.Key, res.Artifact = o.Target.Key, contentArtifactKey(o.Target.Key, m.Encrypted)
	err = extractStaged(ctx, store, root, o.Dir, res.Artifact, m, o.EncryptionKey)
	if errors.Is(err, errCorrupt) {
		verified := false
		res.Verified = &verified
	}
	return res, err
}

// prepareFolder tells whether the archive is to be extracted into root. An extraction that was
// verified but stopped while it moved its entries into place (the pod was killed) is finished
// first: the folder then holds the backup, and nothing more is done. Temporary folders of an
// extraction that did not complete are removed.
func prepareFolder(root *os.Root, dir string, unlessNonEmpty bool) (bool, error) {
	switch _, err := root.Lstat(extractedName); {
	case err == nil:
		return false, moveIntoPlace(root, dir)
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("cannot read %s: %w", dir, describeFileError(err))
	}
	names, err := readNames(root, ".")
	if err != nil {
		return false, fmt.Errorf("cannot read %s: %w", dir, describeFileError(err))
	}
	var content []string
	for _, name := range names {
		switch {
		case strings.HasPrefix(name, extractPrefix):
			if err := removeTree(root, name); err != nil {
				return false, fmt.Errorf("cannot remove %s, left in %s by an extraction that did not complete: %w",
					name, dir, describeFileError(err))
			}
		case !reservedName(name):
			content = append(content, name)
		}
	}
	switch {
	case len(content) == 0:
		return true, nil
	case unlessNonEmpty:
		return false, nil
	}
	return false, fmt.Errorf("%s is not empty (it holds %s): a backup is extracted into an empty folder", dir, content[0])
}

// extractStaged extracts the artifact into a temporary folder of root, then, once it is verified,
// gives folders their modes and times, and moves the entries into place. Until the temporary
// folder is renamed extractedName a failure removes it; after, the next extract finishes the move.
func extractStaged(ctx context.Context, store storage, root *os.Root, dir, artifact string, m *contentManifest, passphrase string) (err error) {
	stage := extractPrefix + "-" + rand.Text()
	if err := root.Mkdir(stage, 0o700); err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, describeFileError(err))
	}
	defer func() {
		if err != nil {
			if cleanupErr := removeTree(root, stage); cleanupErr != nil {
				err = fmt.Errorf("%w; removing %s from %s also failed: %w", err, stage, dir, cleanupErr)
			}
		}
	}()
	staged, err := root.OpenRoot(stage)
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, describeFileError(err))
	}
	defer staged.Close()
	x := &extractor{root: staged, dir: dir, dirs: map[string]bool{".": true}}
	err = readArtifact(ctx, store, artifact, m.stored(), m.Encrypted, passphrase, x.extract)
	if err != nil {
		return err
	}
	if err := x.finishFolders(); err != nil {
		return err
	}
	if err := root.Rename(stage, extractedName); err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, describeFileError(err))
	}
	return moveIntoPlace(root, dir)
}

// moveIntoPlace moves every entry of extractedName into root, then removes it. An entry that is
// already there is not replaced: something else writes into the folder.
func moveIntoPlace(root *os.Root, dir string) error {
	names, err := readNames(root, extractedName)
	if err != nil {
		return fmt.Errorf("cannot read %s in %s: %w", extractedName, dir, describeFileError(err))
	}
	for _, name := range names {
		switch _, err := root.Lstat(name); {
		case err == nil:
			return fmt.Errorf("cannot move %s into %s, which gained an entry of that name while the backup was extracted", name, dir)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("cannot read %s: %w", dir, describeFileError(err))
		}
		if err := moveEntry(root, path.Join(extractedName, name), name); err != nil {
			return fmt.Errorf("cannot move %s into place in %s: %w", name, dir, describeFileError(err))
		}
	}
	if err := syncFolder(root, "."); err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, describeFileError(err))
	}
	if err := root.Remove(extractedName); err != nil {
		return fmt.Errorf("cannot remove %s from %s: %w", extractedName, dir, describeFileError(err))
	}
	return nil
}

// moveEntry renames from to to. Moving a folder to another parent rewrites its "..", which Linux
// allows only when the folder is writable, so a read-only folder is made writable for the move.
func moveEntry(root *os.Root, from, to string) error {
	info, err := root.Lstat(from)
	if err != nil {
		return err
	}
	perm := info.Mode().Perm()
	readOnly := info.IsDir() && perm&0o200 == 0
	if readOnly {
		if err := root.Chmod(from, perm|0o200); err != nil {
			return err
		}
	}
	if err := root.Rename(from, to); err != nil {
		return err
	}
	if readOnly {
		return root.Chmod(to, perm)
	}
	return nil
}

// readNames lists the names in the folder name of root.
func readNames(root *os.Root, name string) ([]string, error) {
	entries, err := fs.ReadDir(root.FS(), name)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, entry := range entries {
		names = append(names, entry.Name())
	}
	return names, nil
}

// removeTree removes name and everything in it. Folders extracted read-only are made writable
// first, since removing what a folder holds takes write permission on it.
func removeTree(root *os.Root, name string) error {
	err := root.RemoveAll(name)
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	_ = fs.WalkDir(root.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = root.Chmod(p, 0o700)
		}
		return nil
	})
	return root.RemoveAll(name)
}

// syncFolder makes the entries of the folder name durable.
func syncFolder(root *os.Root, name string) error {
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return syncOpenFolder(f)
}
