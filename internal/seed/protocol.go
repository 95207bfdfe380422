// Package seed copies a running member's data to a member that has none, or whose data has left
// the cluster's history: a donor process beside each member's server streams a physical copy
// (mariadb-backup's mbstream) to whoever proves it holds the cluster's secret, and the receiving
// member's init container unpacks it, prepares it and records the position it holds, before its
// server starts. A member is seeded from a copy, never by replaying the whole history.
package seed

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// greeting opens every conversation, so that a client that reached some other server says so.
const greeting = "appkeeper-seed/1\n"

const (
	nonceSize = 32
	// frameSize bounds one frame of the copy; a frame of length 0 ends it.
	frameSize = 256 << 10
	// maxMessage bounds the donor's closing message.
	maxMessage = 4 << 10
)

// challenge is the donor's side of the handshake: a fresh nonce, which the receiver answers with
// its HMAC under the secret. The secret never crosses the network.
func challenge(rw io.ReadWriter, secret []byte) error {
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	if _, err := io.WriteString(rw, greeting); err != nil {
		return err
	}
	if _, err := rw.Write(nonce); err != nil {
		return err
	}
	answer := make([]byte, sha256.Size)
	if _, err := io.ReadFull(rw, answer); err != nil {
		return fmt.Errorf("no answer to the challenge: %w", err)
	}
	if !hmac.Equal(answer, mac(secret, nonce)) {
		return errors.New("the answer to the challenge is wrong: the receiver does not hold this cluster's secret")
	}
	return nil
}

// answer is the receiver's side of the handshake.
func answer(rw io.ReadWriter, secret []byte) error {
	hello := make([]byte, len(greeting))
	if _, err := io.ReadFull(rw, hello); err != nil {
		return fmt.Errorf("no greeting from the donor: %w", err)
	}
	if string(hello) != greeting {
		return fmt.Errorf("the peer is not an appkeeper donor (it said %q)", hello)
	}
	nonce := make([]byte, nonceSize)
	if _, err := io.ReadFull(rw, nonce); err != nil {
		return fmt.Errorf("no challenge from the donor: %w", err)
	}
	_, err := rw.Write(mac(secret, nonce))
	return err
}

func mac(secret, nonce []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(nonce)
	return h.Sum(nil)
}

// frameWriter cuts the copy into frames, so that the receiver can tell a complete copy from one
// cut short: the copy ends with an empty frame and the donor's verdict.
type frameWriter struct{ w io.Writer }

func (f frameWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), frameSize)
		var header [4]byte
		binary.BigEndian.PutUint32(header[:], uint32(n))
		if _, err := f.w.Write(header[:]); err != nil {
			return written, err
		}
		if _, err := f.w.Write(p[:n]); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// end closes the copy: an empty message says it is whole, any other why it is not.
func (f frameWriter) end(message string) error {
	if len(message) > maxMessage {
		message = message[len(message)-maxMessage:]
	}
	var trailer [8]byte
	binary.BigEndian.PutUint32(trailer[4:], uint32(len(message)))
	if _, err := f.w.Write(trailer[:]); err != nil {
		return err
	}
	_, err := io.WriteString(f.w, message)
	return err
}

// readFrames copies the frames from r to w and returns the donor's verdict: nil for a whole copy.
func readFrames(r io.Reader, w io.Writer) error {
	var header [4]byte
	for {
		if _, err := io.ReadFull(r, header[:]); err != nil {
			return fmt.Errorf("the copy was cut short: %w", err)
		}
		n := binary.BigEndian.Uint32(header[:])
		if n == 0 {
			break
		}
		if n > frameSize {
			return fmt.Errorf("the donor sent a frame of %d bytes, more than %d", n, frameSize)
		}
		if _, err := io.CopyN(w, r, int64(n)); err != nil {
			return fmt.Errorf("the copy was cut short: %w", err)
		}
	}
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return fmt.Errorf("the copy was cut short: %w", err)
	}
	n := binary.BigEndian.Uint32(header[:])
	if n > maxMessage {
		return fmt.Errorf("the donor's closing message is %d bytes, more than %d", n, maxMessage)
	}
	message := make([]byte, n)
	if _, err := io.ReadFull(r, message); err != nil {
		return fmt.Errorf("the copy was cut short: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("the donor could not copy its data: %s", message)
	}
	return nil
}
