package localcluster

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every line with the same line, until the test ends.
func echoServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c) }()
		}
	}()
	return l.Addr().String()
}

func TestTheRelayPassesBytesBothWaysAndEndsItsConnectionsWhenClosed(t *testing.T) {
	relay, err := startAPIRelay(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", relay.address())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("read through the relay: %q, %v; want the echo", line, err)
	}
	relay.close()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a connection through a closed relay still reads")
	}
	if c, err := net.DialTimeout("tcp", relay.address(), time.Second); err == nil {
		_ = c.Close()
		t.Error("a closed relay still accepts connections")
	}
}
