package seed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"sync"
	"time"
)

// handshakeTimeout bounds how long a connection may take to prove it holds the secret.
const handshakeTimeout = 10 * time.Second

// Donor serves copies of its member's data to the members that prove they hold Secret.
type Donor struct {
	Secret []byte
	// Copy is the command that writes a copy of the data to its standard output.
	Copy func(ctx context.Context) *exec.Cmd
	Log  *slog.Logger
	// one copy at a time: each one reads the whole data folder.
	busy sync.Mutex
}

// Serve answers connections on l until ctx ends.
func (d *Donor) Serve(ctx context.Context, l net.Listener) error {
	go func() {
		<-ctx.Done()
		_ = l.Close()
	}()
	for {
		conn, err := l.Accept()
		if ctx.Err() != nil {
			// The listener was closed to stop serving.
			return nil //nolint:nilerr
		}
		if err != nil {
			return err
		}
		go d.serve(ctx, conn)
	}
}

func (d *Donor) serve(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	peer := conn.RemoteAddr().String()
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := challenge(conn, d.Secret); err != nil {
		d.Log.Info("refused a copy", "peer", peer, "reason", err.Error())
		return
	}
	_ = conn.SetDeadline(time.Time{})
	d.busy.Lock()
	defer d.busy.Unlock()
	began := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A receiver that goes away ends the copy: it sends nothing after the handshake.
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		cancel()
	}()
	frames := frameWriter{w: conn}
	cmd := d.Copy(ctx)
	var stderr tail
	cmd.Stdout, cmd.Stderr = frames, &stderr
	err := cmd.Run()
	message := ""
	if err != nil {
		message = fmt.Sprintf("%s: %v: %s", cmd.Path, err, bytes.TrimSpace(stderr.Bytes()))
	}
	if endErr := frames.end(message); endErr != nil && err == nil {
		err = endErr
	}
	if err != nil {
		d.Log.Info("a copy failed", "peer", peer, "error", errors.Join(err).Error(), "output", string(stderr.Bytes()))
		return
	}
	d.Log.Info("copied the data", "peer", peer, "duration", time.Since(began).Round(time.Millisecond).String())
}

// tail keeps the last maxMessage bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - maxMessage; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}
