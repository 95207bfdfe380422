package seed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"time"
)

// dialTimeout bounds the connection to a donor.
const dialTimeout = 5 * time.Second

// fetch receives a copy of the data of the donor at address into dir, unpacked by unpack (mbstream
// reading the copy on its standard input).
func fetch(ctx context.Context, address string, secret []byte, unpack *exec.Cmd) error {
	dialer := net.Dialer{Timeout: dialTimeout, KeepAlive: 10 * time.Second}
	conn, err := dialer.DialContext(ctx, "tcp", address)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := answer(conn, secret); err != nil {
		return err
	}
	_ = conn.SetDeadline(time.Time{})
	stdin, err := unpack.StdinPipe()
	if err != nil {
		return err
	}
	var stderr tail
	unpack.Stderr = &stderr
	if err := unpack.Start(); err != nil {
		return fmt.Errorf("start %s: %w", unpack.Path, err)
	}
	received := readFrames(conn, stdin)
	_ = stdin.Close()
	unpacked := unpack.Wait()
	if unpacked != nil {
		unpacked = fmt.Errorf("%s: %w: %s", unpack.Path, unpacked, stderr.Bytes())
	}
	if err := errors.Join(received, unpacked); err != nil {
		return err
	}
	return ctx.Err()
}
