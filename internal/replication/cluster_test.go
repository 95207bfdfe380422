package replication_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/appkeeper/appkeeper/internal/replication"
	"github.com/appkeeper/appkeeper/test/framework/ackwriter"
	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// The clusters here are three real MariaDB servers on loopback ports, configured as the operator
// configures its members; a test plays the operator's part by calling the procedures, and a
// router stands in for the Service that follows the primary.

const (
	rootPassword = "root-pässword"
	appPassword  = "app-secret"
	replPassword = "repl-secret"
)

// template is the data directory every server copies.
var template testservers.Template

func TestMain(m *testing.M) {
	// The driver logs every connection a killed server drops; the tests expect them.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	code := m.Run()
	template.Remove()
	os.Exit(code)
}

type server struct {
	*testservers.MariaDB
	member replication.Member
	app    *sql.DB
}

type cluster struct {
	t       *testing.T
	servers []*server
	proc    replication.Procedure
	// primary is the member the router sends writes to, and record what the procedures recorded.
	primary  atomic.Int32
	recorded []string
	// issued is the last id a writer on the cluster issued.
	issued int64
}

// stop stops a writer, and the next one numbers its rows after it.
func (c *cluster) stop(w *ackwriter.Writer) ackwriter.Result {
	r := w.Stop()
	c.issued = r.Issued
	return r
}

// startCluster starts members servers configured as the operator configures a cluster, each
// with the accounts the operator creates, and opens the first as primary.
func startCluster(t *testing.T, members int, d replication.Durability) *cluster {
	t.Helper()
	ctx := context.Background()
	c := &cluster{t: t}
	c.proc = replication.Procedure{Members: members, Durability: d, CatchUp: 30 * time.Second, OperatorUsers: []string{"root"}}
	c.proc.Record = func(_ context.Context, primary string, fork replication.Position) error {
		c.recorded = append(c.recorded, primary)
		c.proc.Fork = fork
		return nil
	}
	for i := range members {
		s, err := testservers.StartMariaDB(ctx, testservers.MariaDBOptions{Dir: t.TempDir(), Template: template.DirFor(t), RootPassword: rootPassword,
			Args: []string{fmt.Sprintf("--server-id=%d", 100+i), "--log-slave-updates", "--binlog-format=ROW", "--sync-binlog=1",
				"--gtid-strict-mode", "--gtid-domain-id=0", "--read-only", "--skip-slave-start", "--slave-net-timeout=5",
				"--rpl-semi-sync-slave-enabled", "--init-rpl-role=SLAVE"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		srv := &server{MariaDB: s}
		srv.member = replication.Member{Name: fmt.Sprintf("member-%d", i), DB: open(t, s.Port, "root", rootPassword),
			Source: replication.Source{Host: "127.0.0.1", Port: s.Port, User: "repl", Password: replPassword}}
		// The accounts every member makes for itself at each start, outside the binary log, and
		// no history of its own: the root password its start set is forgotten with RESET MASTER.
		mustExec(t, srv.member.DB, "SET SESSION sql_log_bin = 0",
			"CREATE USER 'repl'@'%' IDENTIFIED BY '"+replPassword+"'", "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'",
			"CREATE DATABASE app", "CREATE USER 'app'@'%' IDENTIFIED BY '"+appPassword+"'", "GRANT ALL ON app.* TO 'app'@'%'",
			"RESET MASTER")
		srv.app = open(t, s.Port, "app", appPassword)
		c.servers = append(c.servers, srv)
	}
	views := replication.ObserveAll(ctx, c.members())
	if err := replication.OpenWrites(ctx, c.servers[0].member.DB, views[0].Observation, d, members > 1, time.Second); err != nil {
		t.Fatal(err)
	}
	for i, s := range c.servers[1:] {
		if err := replication.Follow(ctx, s.member.DB, views[i+1].Observation, c.servers[0].member.Source); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, c.servers[0].app, ackwriter.Schema)
	return c
}

func open(t *testing.T, port int, user, password string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, password, "tcp", fmt.Sprintf("127.0.0.1:%d", port), "app"
	cfg.Timeout, cfg.ReadTimeout = 2*time.Second, 10*time.Second
	if user == "root" {
		cfg.DBName = ""
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, statements ...string) {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range statements {
		if _, err := conn.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func (c *cluster) members() []replication.Member {
	var members []replication.Member
	for _, s := range c.servers {
		members = append(members, s.member)
	}
	return members
}

// dial reaches the primary as the client Service does: a connection made before a change of
// primary stays where it was.
func (c *cluster) dial(ctx context.Context) (*sql.Conn, error) {
	return c.servers[c.primary.Load()].app.Conn(ctx)
}

func (c *cluster) index(name string) int {
	for i, s := range c.servers {
		if s.member.Name == name {
			return i
		}
	}
	c.t.Fatalf("no member %s", name)
	return -1
}

// others are the members but i.
func (c *cluster) others(i int) []replication.Member {
	var members []replication.Member
	for j, s := range c.servers {
		if j != i {
			members = append(members, s.member)
		}
	}
	return members
}

// waitForAcks waits until the writer has n more acknowledgements than it had.
func waitForAcks(t *testing.T, w *ackwriter.Writer, n int) {
	t.Helper()
	if err := w.WaitFor(n, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// checkEveryMember waits until every member holds what the primary holds, then checks that each
// holds every acknowledged row and no row the writer was refused or never sent.
func (c *cluster) checkEveryMember(r ackwriter.Result) {
	c.t.Helper()
	ctx := context.Background()
	primary := c.servers[c.primary.Load()]
	o, err := replication.Observe(ctx, primary.member.DB)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, s := range c.servers {
		// Not on the primary: its replication position does not move, and a wait left there
		// would hold back its next change of source.
		if s != primary {
			if err := replication.CatchUp(ctx, s.member.DB, o.Binlog, 30*time.Second); err != nil {
				c.t.Fatalf("%s: %v", s.member.Name, err)
			}
		}
		v, err := ackwriter.Check(ctx, s.app, r)
		if err != nil {
			c.t.Fatal(err)
		}
		if len(v.Lost) > 0 || len(v.Phantom) > 0 {
			c.t.Errorf("%s: %s", s.member.Name, v)
		}
	}
	c.t.Logf("%d acknowledged, %d refused, %d in doubt; longest gap between acknowledgements %s",
		len(r.Acked), len(r.Failed), len(r.InDoubt), r.LongestGap.Round(time.Millisecond))
}

// rejoin brings a stopped member back and points it at the primary, as the operator does once
// it answers again: unless it holds writes the new history does not.
func (c *cluster) rejoin(i int, fork replication.Position) {
	c.t.Helper()
	ctx := context.Background()
	s := c.servers[i]
	c.restart(i)
	o, err := replication.Observe(ctx, s.member.DB)
	if err != nil {
		c.t.Fatal(err)
	}
	if !fork.Covers(o.Binlog) {
		c.t.Fatalf("%s came back with %s beyond the fork %s", s.member.Name, o.Binlog, fork)
	}
	if err := replication.Follow(ctx, s.member.DB, o, c.servers[c.primary.Load()].member.Source); err != nil {
		c.t.Fatal(err)
	}
}

// restart starts the stopped member i again, on a new port.
func (c *cluster) restart(i int) {
	c.t.Helper()
	s := c.servers[i]
	if err := s.Restart(context.Background()); err != nil {
		c.t.Fatal(err)
	}
	s.member.DB = open(c.t, s.Port, "root", rootPassword)
	s.member.Source.Port = s.Port
	s.app = open(c.t, s.Port, "app", appPassword)
}

// failOver promotes a replica in place of the failed primary old, and routes writes to it.
func (c *cluster) failOver(old int) (string, replication.Position) {
	c.t.Helper()
	successor, fork, err := c.proc.Failover(context.Background(), c.servers[old].member, c.others(old), false)
	if err != nil {
		c.t.Fatal(err)
	}
	c.primary.Store(int32(c.index(successor)))
	return successor, fork
}

func TestFailoverAfterTheKillOfThePrimaryLosesNoAcknowledgedWrite(t *testing.T) {
	c := startCluster(t, 3, replication.Durability{})
	ctx := context.Background()
	for trial := range 3 {
		w := ackwriter.Start(ctx, c.dial, 4, c.issued)
		waitForAcks(t, w, 100)
		old := int(c.primary.Load())
		c.servers[old].Stop()
		successor, fork := c.failOver(old)
		waitForAcks(t, w, 100)
		r := c.stop(w)
		t.Logf("trial %d: %s took over from %s at %s", trial, successor, c.servers[old].member.Name, fork)
		c.rejoin(old, fork)
		c.checkEveryMember(r)
	}
}

func TestSwitchoverLosesNoAcknowledgedWrite(t *testing.T) {
	c := startCluster(t, 3, replication.Durability{})
	ctx := context.Background()
	for trial := range 3 {
		w := ackwriter.Start(ctx, c.dial, 4, c.issued)
		waitForAcks(t, w, 100)
		old := int(c.primary.Load())
		to := (old + 1) % len(c.servers)
		var others []replication.Member
		for j, s := range c.servers {
			if j != old && j != to {
				others = append(others, s.member)
			}
		}
		// The new primary's binary log no longer holds what the old primary last applied as a
		// replica, as once old logs expire: the old primary must resume after what it wrote.
		mustExec(t, c.servers[to].member.DB, "FLUSH BINARY LOGS", "PURGE BINARY LOGS BEFORE NOW() + INTERVAL 1 SECOND")
		began := time.Now()
		if _, err := c.proc.Switchover(ctx, c.servers[old].member, c.servers[to].member, others); err != nil {
			t.Fatal(err)
		}
		c.primary.Store(int32(to))
		t.Logf("trial %d: switched from %s to %s in %s", trial, c.servers[old].member.Name, c.servers[to].member.Name, time.Since(began).Round(time.Millisecond))
		waitForAcks(t, w, 100)
		c.checkEveryMember(c.stop(w))
	}
}

func TestFailoverWaitsWhileAReplicaThatMayHoldTheLastWriteCannotBeRead(t *testing.T) {
	c := startCluster(t, 3, replication.Durability{})
	ctx := context.Background()
	w := ackwriter.Start(ctx, c.dial, 4, c.issued)
	waitForAcks(t, w, 100)
	c.servers[2].Stop()
	waitForAcks(t, w, 100)
	c.servers[0].Stop()
	_, _, err := c.proc.Failover(ctx, c.servers[0].member, c.others(0), false)
	var blocked *replication.Blocked
	if !errors.As(err, &blocked) || blocked.Reason != replication.ReasonCannotProveNoLoss {
		t.Fatalf("failover with a replica that cannot be read: got %v, want %s", err, replication.ReasonCannotProveNoLoss)
	}
	if err := c.servers[1].member.DB.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	var readOnly bool
	if err := c.servers[1].member.DB.QueryRow("SELECT @@read_only").Scan(&readOnly); err != nil || !readOnly {
		t.Fatalf("the replica was opened to writes (read_only %v, %v)", readOnly, err)
	}
	// Once the replica answers again, the failover proceeds, and nothing is lost.
	c.restart(2)
	_, fork := c.failOver(0)
	waitForAcks(t, w, 100)
	r := c.stop(w)
	c.rejoin(0, fork)
	c.checkEveryMember(r)
}

// TestTheCheckerSeesLossesWhenReplicationIsUnprotected is the negative control: with a primary that
// stops waiting for acknowledgements after 100 ms and replicas that receive nothing, a failover
// loses what the primary acknowledged alone, and the checker must say so, or it could not be
// trusted when it finds nothing.
func TestTheCheckerSeesLossesWhenReplicationIsUnprotected(t *testing.T) {
	c := startCluster(t, 3, replication.Durability{AckTimeout: 100 * time.Millisecond})
	ctx := context.Background()
	w := ackwriter.Start(ctx, c.dial, 4, c.issued)
	waitForAcks(t, w, 100)
	c.stopReplicasReceiving()
	waitForAcks(t, w, 100)
	_ = syscall.Kill(c.servers[0].Pid(), syscall.SIGKILL)
	c.servers[0].Stop()
	successor, _ := c.failOver(0)
	r := c.stop(w)
	v, err := ackwriter.Check(ctx, c.servers[c.index(successor)].app, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Lost) == 0 {
		t.Fatalf("the checker found no lost write after a failover of unprotected replication: %s", v)
	}
	t.Logf("the checker found what unprotected replication lost: %s", v)
}

// TestFencingReportsNoWaitingWriteAsDone: a primary left behind, whose clients wait for an
// acknowledgement no replica sends any more (it hung while a replica took over, say), is fenced:
// its clients' sessions, killed first, end in doubt, none of their writes is reported done, and
// then it turns read-only, which it could not while those writes waited. Killed in the wrong
// order, a group commit's waiting leader before the others of its group, the others would be
// told their writes are done.
func TestFencingReportsNoWaitingWriteAsDone(t *testing.T) {
	c := startCluster(t, 3, replication.Durability{})
	ctx := context.Background()
	// Enough writers that commits are grouped: a group's leader waits for the acknowledgement on
	// behalf of the others.
	w := ackwriter.Start(ctx, c.dial, 16, c.issued)
	waitForAcks(t, w, 100)
	c.stopReplicasReceiving()
	time.Sleep(500 * time.Millisecond)
	fenceCtx, cancel := context.WithTimeout(ctx, replication.StepTimeout)
	if err := replication.Fence(fenceCtx, c.servers[0].member.DB, "root"); err != nil {
		t.Fatalf("fence: %v", err)
	}
	cancel()
	time.Sleep(time.Second)
	r := c.stop(w)
	if len(r.InDoubt) == 0 {
		t.Fatalf("no write ended in doubt: %d acknowledged, %d refused", len(r.Acked), len(r.Failed))
	}
	// Each acknowledged write is on one replica at least, the one that acknowledged it, once it
	// has applied all it received.
	lostOnAll := map[int64]int{}
	for _, s := range c.servers[1:] {
		o, err := replication.Observe(ctx, s.member.DB)
		if err != nil {
			t.Fatal(err)
		}
		if err := replication.CatchUp(ctx, s.member.DB, o.Held(), 30*time.Second); err != nil {
			t.Fatalf("%s: %v", s.member.Name, err)
		}
		v, err := ackwriter.Check(ctx, s.app, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range v.Lost {
			lostOnAll[id]++
		}
	}
	for id, replicas := range lostOnAll {
		if replicas == len(c.servers)-1 {
			t.Errorf("row %d was reported done by the fenced primary and is on no replica", id)
		}
	}
	t.Logf("%d acknowledged, %d in doubt once fenced", len(r.Acked), len(r.InDoubt))
}

// stopReplicasReceiving stops every member but the first, the primary, receiving its writes.
func (c *cluster) stopReplicasReceiving() {
	c.t.Helper()
	for _, s := range c.servers[1:] {
		if err := replication.StopReceiving(context.Background(), s.member.DB); err != nil {
			c.t.Fatal(err)
		}
	}
}
