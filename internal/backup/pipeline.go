package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"filippo.io/age"
	"github.com/klauspost/compress/gzip"
)

// scryptWorkFactor is the cost of deriving the key from the passphrase: 2^16 iterations take
// 64 MiB and a fraction of a second, where age's default (2^18) takes 256 MiB, which a backup
// Job's memory limit may not allow. The passphrase comes from a Secret, not a person's memory.
const scryptWorkFactor = 16

// DefaultCompressLevel favours speed: a dump is mostly text, and gzip's fastest level already
// shrinks it several times while keeping up with mysqldump.
const DefaultCompressLevel = gzip.BestSpeed

// stored is what was written of an artifact.
type stored struct {
	size   int64
	sha256 string
}

// artifactSource is what an artifact is made of, a dump's output or an archive of a folder: wait,
// once it is drained, reports whether it was complete (mysqldump's exit status, the archive's
// walk); abort stops a source whose output will not be drained.
type artifactSource interface {
	io.Reader
	wait() error
	abort()
}

// producedSource is the output of produce, which runs in its own goroutine while the artifact is
// stored: an archive is written as it is walked, never held in memory.
type producedSource struct {
	*io.PipeReader
	done chan error
	err  error
}

func produced(produce func(w io.Writer) error) *producedSource {
	pr, pw := io.Pipe()
	s := &producedSource{PipeReader: pr, done: make(chan error, 1)}
	go func() {
		err := produce(pw)
		_ = pw.CloseWithError(err) // nil closes with EOF: the stream is complete
		s.done <- err
	}()
	return s
}

// wait returns produce's error once it has returned.
func (s *producedSource) wait() error {
	if s.done != nil {
		s.err, s.done = <-s.done, nil
	}
	return s.err
}

// abort makes produce's next write fail, so that it returns.
func (s *producedSource) abort() { _ = s.CloseWithError(errAborted) }

var errAborted = errors.New("the artifact was abandoned")

// storeArtifact streams src through gzip, then age when passphrase is set, into store at key,
// hashing and counting the bytes as stored. When src is incomplete, or anything fails, the store
// keeps nothing. Memory stays bounded: nothing is buffered beyond one upload part.
func storeArtifact(ctx context.Context, store storage, key string, src artifactSource, level int, passphrase string) (stored, error) {
	pr, pw := io.Pipe()
	produced := make(chan error, 1)
	go func() {
		err := encode(pw, src, level, passphrase)
		if err != nil {
			src.abort()
			_ = src.wait()
		} else {
			err = src.wait()
		}
		produced <- err
		_ = pw.CloseWithError(err) // nil closes with EOF: the stream is complete
	}()
	// Cancelling ctx (SIGTERM) fails the stream rather than the store's requests, so that the
	// store still aborts its upload cleanly; a store that hangs is cut off after a grace period.
	putCtx, cancelPut := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelPut()
	stop := context.AfterFunc(ctx, func() {
		_ = pr.CloseWithError(ctx.Err())
		time.AfterFunc(abortGrace, cancelPut)
	})
	defer stop()
	counter := newHashingReader(pr)
	putErr := store.put(putCtx, key, counter, -1)
	// Unblock the producer if the store gave up before the end of the stream.
	_ = pr.CloseWithError(errStoreFailed)
	prodErr := <-produced
	switch {
	case prodErr != nil && !errors.Is(prodErr, errStoreFailed):
		// The source is the cause; the store only relayed its error.
		if putErr == nil {
			// Cannot happen when the store reads to the end, as every storage does; remove
			// whatever it kept rather than trust it.
			_ = store.delete(context.WithoutCancel(ctx), key)
		}
		return stored{}, prodErr
	case putErr != nil:
		return stored{}, putErr
	}
	return stored{size: counter.n, sha256: counter.sum()}, nil
}

// checkStored asks the store whether it holds all that was sent of artifact, before a manifest
// vouches for it.
func checkStored(ctx context.Context, store storage, artifact string, s stored) error {
	size, err := store.stat(ctx, artifact)
	if err != nil {
		return err
	}
	if size != s.size {
		return fmt.Errorf("the storage holds %d bytes of %s, %d were written", size, artifact, s.size)
	}
	return nil
}

var errStoreFailed = errors.New("the storage stopped reading")

// abortGrace is how long a cancelled upload has to abort itself: less than the 30 seconds
// Kubernetes leaves a terminated pod before it kills it.
const abortGrace = 15 * time.Second

// encode writes src compressed, and encrypted when passphrase is set, to dst.
func encode(dst io.Writer, src io.Reader, level int, passphrase string) error {
	out := dst
	var encrypted io.WriteCloser
	if passphrase != "" {
		recipient, err := age.NewScryptRecipient(passphrase)
		if err != nil {
			return fmt.Errorf("cannot encrypt: %w", err)
		}
		recipient.SetWorkFactor(scryptWorkFactor)
		if encrypted, err = age.Encrypt(dst, recipient); err != nil {
			return fmt.Errorf("cannot encrypt: %w", err)
		}
		out = encrypted
	}
	gz, err := gzip.NewWriterLevel(out, level)
	if err != nil {
		return err
	}
	if _, err := io.Copy(gz, src); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if encrypted != nil {
		return encrypted.Close()
	}
	return nil
}

// decryptingReader returns the plain gzip stream of a stored artifact.
func decryptingReader(src io.Reader, encrypted bool, passphrase string) (io.Reader, error) {
	if !encrypted {
		return src, nil
	}
	if passphrase == "" {
		return nil, fmt.Errorf("the backup is encrypted: set %s to its passphrase", EnvEncryptionKey)
	}
	identity, err := age.NewScryptIdentity(passphrase)
	if err != nil {
		return nil, err
	}
	return age.Decrypt(src, identity)
}

// hashingReader hashes and counts what is read through it, to check an artifact against its
// manifest while it streams.
type hashingReader struct {
	r    io.Reader
	hash hash.Hash
	n    int64
}

func newHashingReader(r io.Reader) *hashingReader {
	return &hashingReader{r: r, hash: sha256.New()}
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.hash.Write(p[:n])
	h.n += int64(n)
	return n, err
}

func (h *hashingReader) sum() string { return hex.EncodeToString(h.hash.Sum(nil)) }
