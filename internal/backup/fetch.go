package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// FetchOptions are the inputs of Fetch.
type FetchOptions struct {
	Target      Target
	Credentials Credentials
	// EncryptionKey is the passphrase of an encrypted backup.
	EncryptionKey string
	// Out is the file the gzip-compressed SQL is written to.
	Out string
	// UnlessInitialized, when set, is a server's data directory: when it already holds one
	// (DIR/mysql exists), the server is restarting, not starting for the first time, and
	// nothing is fetched.
	UnlessInitialized string
}

// errCorrupt marks an artifact that does not match its manifest, or that does not decrypt.
var errCorrupt = errors.New("the backup cannot be restored")

// Fetch writes the target's artifact, checked against its manifest and decrypted, to o.Out. The
// file appears whole or not at all.
func Fetch(ctx context.Context, o FetchOptions) (Result, error) {
	res := Result{Key: o.Target.Key}
	if err := validateKey(o.Target.Key); err != nil {
		return res, fmt.Errorf("--%s: %w", flagKey, err)
	}
	if o.Out == "" {
		return res, fmt.Errorf("--%s is required", FlagOut)
	}
	if o.UnlessInitialized != "" {
		initialized, err := dataDirInitialized(o.UnlessInitialized)
		if err != nil || initialized {
			return res, err
		}
	}
	store, err := openStorage(o.Target, o.Credentials)
	if err != nil {
		return res, err
	}
	m, err := readManifest(ctx, store, o.Target.Key)
	if err != nil {
		return res, err
	}
	res = m.result()
	res.Artifact = ArtifactKey(o.Target.Key, m.Encrypted)
	res.Key = o.Target.Key
	// The server's entrypoint reads the file as its own user, not the one that wrote it.
	err = writeAtomically(o.Out, 0o644, func(w io.Writer) error {
		return readArtifact(ctx, store, res.Artifact, m.stored(), m.Encrypted, o.EncryptionKey, func(r io.Reader) error {
			_, err := io.Copy(w, r)
			return err
		})
	})
	if errors.Is(err, errCorrupt) {
		verified := false
		res.Verified = &verified
	}
	return res, err
}

func dataDirInitialized(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, "mysql"))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("cannot tell whether %s holds a data directory: %w", dir, err)
}

// readArtifact streams the artifact, decrypted, to consume, and checks its size and SHA-256
// against want once it has been read to the end. An error of consume that is not a writeError
// is the artifact's fault (its content cannot be restored): like a checksum that does not match,
// it is errCorrupt.
func readArtifact(ctx context.Context, store storage, artifact string, want stored, encrypted bool, passphrase string,
	consume func(io.Reader) error) error {
	if encrypted && passphrase == "" {
		return fmt.Errorf("the backup is encrypted: set %s to its passphrase", EnvEncryptionKey)
	}
	// A missing or truncated artifact is told before it is downloaded.
	size, err := store.stat(ctx, artifact)
	if errors.Is(err, errNotFound) {
		return fmt.Errorf("%w: its manifest names %s, which does not exist", errCorrupt, artifact)
	}
	if err != nil {
		return err
	}
	if size != want.size {
		return fmt.Errorf("%w: %s is corrupt: it has %d bytes, its manifest says %d", errCorrupt, artifact, size, want.size)
	}
	r, err := store.get(ctx, artifact)
	if err != nil {
		return err
	}
	defer r.Close()
	source := &recordingReader{r: r}
	stored := newHashingReader(source)
	plain, decryptErr := decryptingReader(stored, encrypted, passphrase)
	var consumeErr error
	if decryptErr == nil {
		decrypted := &recordingReader{r: plain}
		consumeErr = consume(decrypted)
		decryptErr = decrypted.err
	}
	if source.err != nil {
		return fmt.Errorf("cannot read %s: %w", artifact, source.err)
	}
	var written *writeError
	if errors.As(consumeErr, &written) {
		return consumeErr
	}
	// Read what decryption or consume left, if they failed, so that the checksum tells a corrupt
	// artifact from a wrong passphrase or a bad archive.
	if _, drainErr := io.Copy(io.Discard, stored); drainErr != nil {
		return fmt.Errorf("cannot read %s: %w", artifact, drainErr)
	}
	if stored.n != want.size || stored.sum() != want.sha256 {
		return fmt.Errorf("%w: %s is corrupt: it has %d bytes with SHA-256 %s, its manifest says %d bytes with SHA-256 %s",
			errCorrupt, artifact, stored.n, stored.sum(), want.size, want.sha256)
	}
	if decryptErr != nil {
		return fmt.Errorf("%w: %s does not decrypt with the passphrase in %s, which is not the one it was encrypted with: %w",
			errCorrupt, artifact, EnvEncryptionKey, decryptErr)
	}
	if consumeErr != nil {
		return fmt.Errorf("%w: %s: %w", errCorrupt, artifact, consumeErr)
	}
	return nil
}

// writeError is a failure to write the output, as opposed to reading the artifact.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// writeAtomically writes a temporary file beside path with write, gives it mode, syncs it and
// renames it to path; on any error the temporary file is removed and path is left as it was.
func writeAtomically(path string, mode os.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, describeFileError(err))
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := write(&writerOf{w: tmp, path: path}); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, describeFileError(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, describeFileError(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, describeFileError(err))
	}
	return syncDir(dir)
}

// writerOf marks its write errors as writeErrors.
type writerOf struct {
	w    io.Writer
	path string
}

func (w *writerOf) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		err = &writeError{fmt.Errorf("cannot write %s: %w", w.path, describeFileError(err))}
	}
	return n, err
}
