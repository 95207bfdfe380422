package replication_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/appkeeper/appkeeper/internal/replication"
	"github.com/appkeeper/appkeeper/test/framework/ackwriter"
	"github.com/appkeeper/appkeeper/test/framework/await"
)

// A replica's acknowledgement of a commit is lost with its connection: the replica reconnects
// from what it holds, MariaDB credits it with nothing it received before, and with durability
// Required the commit waits for good, every later one queued behind it. A relay between the
// replica and the primary drops the acknowledgements, then breaks the connection, as a primary
// that hangs longer than slave_net_timeout does. Ending the waiting session loses nothing: the
// replica holds its commit, and the writes go on, acknowledged as before.
func TestACommitWhoseAcknowledgementWasLostIsReleased(t *testing.T) {
	c := startCluster(t, 2, replication.Durability{})
	ctx := context.Background()
	primary, replica := c.servers[0].member, c.servers[1].member
	relay := startAckRelay(t, primary.Source.Port)
	follow(t, replica, replication.Source{Host: "127.0.0.1", Port: relay.port, User: "repl", Password: replPassword})

	w := ackwriter.Start(ctx, c.dial, 1, c.issued)
	waitForAcks(t, w, 20)
	relay.dropAcks.Store(true)
	await.Eventually(t, 30*time.Second, func(context.Context) error {
		if p, r := observe(t, primary), observe(t, replica); p.SemiSyncWaiting == 0 || r.Replica == nil || !r.Replica.Received.Covers(p.Binlog) {
			return fmt.Errorf("the primary at %s has %d sessions waiting for an acknowledgement; the replica: %+v", p.Binlog, p.SemiSyncWaiting, r.Replica)
		}
		return nil
	})
	relay.dropAcks.Store(false)
	relay.breakConnections()
	acked := w.Acknowledged()
	time.Sleep(replication.AckLostAfter)
	if o := observe(t, replica).Replica; o == nil || o.Receiving != "Yes" || observe(t, primary).SemiSyncReplicas != 1 {
		t.Fatalf("the replica does not receive again: %+v", o)
	}
	if now := w.Acknowledged(); now != acked {
		t.Fatalf("%d writes were acknowledged after the replica reconnected: MariaDB now credits a reconnecting replica, "+
			"and the commits it holds no longer need releasing", now-acked)
	}
	stuckAt := observe(t, primary).Binlog
	if ended, err := replication.ReleaseLostAcks(ctx, primary, c.others(0), replication.Position{}); err != nil || ended != 0 {
		t.Fatalf("ReleaseLostAcks ended %d sessions (%v) though the binary log did not end where the caller saw it", ended, err)
	}
	ended, err := replication.ReleaseLostAcks(ctx, primary, c.others(0), stuckAt)
	if err != nil || ended != 1 {
		t.Fatalf("ReleaseLostAcks ended %d sessions (%v), want the one waiting", ended, err)
	}
	waitForAcks(t, w, 20)
	r := c.stop(w)
	if len(r.InDoubt) == 0 {
		t.Errorf("no write in doubt: the waiting session's client is told nothing of its write")
	}
	c.checkEveryMember(r)
}

// A commit that no replica received waits, as durability Required promises: it is not released.
func TestACommitNoReplicaHoldsIsNotReleased(t *testing.T) {
	c := startCluster(t, 2, replication.Durability{})
	ctx := context.Background()
	primary := c.servers[0].member
	w := ackwriter.Start(ctx, c.dial, 1, c.issued)
	waitForAcks(t, w, 20)
	c.stopReplicasReceiving()
	await.Eventually(t, 30*time.Second, func(context.Context) error {
		if observe(t, primary).SemiSyncWaiting == 0 {
			return errors.New("no session of the primary waits for an acknowledgement")
		}
		return nil
	})
	acked := w.Acknowledged()
	time.Sleep(replication.AckLostAfter + time.Second)
	if ended, err := replication.ReleaseLostAcks(ctx, primary, c.others(0), observe(t, primary).Binlog); err != nil || ended != 0 {
		t.Fatalf("ReleaseLostAcks ended %d sessions (%v) whose commit no replica holds", ended, err)
	}
	if now := w.Acknowledged(); now != acked {
		t.Fatalf("%d writes were acknowledged while no replica received", now-acked)
	}
	follow(t, c.servers[1].member, primary.Source)
	waitForAcks(t, w, 20)
	c.checkEveryMember(c.stop(w))
}

func follow(t *testing.T, m replication.Member, source replication.Source) {
	t.Helper()
	if err := replication.Follow(context.Background(), m.DB, observe(t, m), source); err != nil {
		t.Fatal(err)
	}
}

func observe(t *testing.T, m replication.Member) replication.Observation {
	t.Helper()
	o, err := replication.Observe(context.Background(), m.DB)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// ackRelay passes a replica's connections to its primary, and drops what the replica sends (its
// acknowledgements) while dropAcks is set.
type ackRelay struct {
	port     int
	dropAcks atomic.Bool
	mu       sync.Mutex
	conns    []net.Conn
}

func startAckRelay(t *testing.T, primaryPort int) *ackRelay {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &ackRelay{port: l.Addr().(*net.TCPAddr).Port}
	t.Cleanup(func() { _ = l.Close(); r.breakConnections() })
	go func() {
		for {
			replica, err := l.Accept()
			if err != nil {
				return
			}
			primary, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(primaryPort)))
			if err != nil {
				_ = replica.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, replica, primary)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(replica, primary) }()
			go r.passUnlessDropping(primary, replica)
		}
	}()
	return r
}

func (r *ackRelay) passUnlessDropping(to, from net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := from.Read(buf)
		if n > 0 && !r.dropAcks.Load() {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				_ = to.Close()
			}
			return
		}
	}
}

func (r *ackRelay) breakConnections() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		_ = c.Close()
	}
	r.conns = nil
}
