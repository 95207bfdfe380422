// Package ackwriter writes numbered rows to a database on several connections and records, for
// each, whether the server acknowledged it, refused it, or left it in doubt when the connection
// died during the commit; Check then tells whether every acknowledged row is still there. It is
// how the failover tests prove that no acknowledged write was lost.
package ackwriter

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Table holds the rows; Schema creates it.
const Table = "appkeeper_acks"

// Schema creates the table the writer fills, in the connection's database.
const Schema = "CREATE TABLE IF NOT EXISTS " + Table + " (id BIGINT PRIMARY KEY, conn INT NOT NULL, at DATETIME(6) NOT NULL) ENGINE=InnoDB"

// Dial opens a connection to wherever writes go now, as a client reaching a Service would.
type Dial func(ctx context.Context) (*sql.Conn, error)

// Writer writes until stopped.
type Writer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	first int64

	mu      sync.Mutex
	next    int64
	acked   []ack
	failed  []int64
	inDoubt []int64
}

type ack struct {
	id int64
	at time.Time
}

// Start writes on connections sessions at once until Stop, each reconnecting 100 ms after a
// failure. Its ids follow after, so that the writers of one table never share an id.
func Start(ctx context.Context, dial Dial, connections int, after int64) *Writer {
	ctx, cancel := context.WithCancel(ctx)
	w := &Writer{cancel: cancel, first: after + 1, next: after}
	for c := range connections {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.write(ctx, dial, c)
		}()
	}
	return w
}

func (w *Writer) write(ctx context.Context, dial Dial, connection int) {
	for ctx.Err() == nil {
		conn, err := dial(ctx)
		if err != nil {
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		for ctx.Err() == nil {
			id := w.issue()
			// The commit is not cancelled with ctx: a stop between send and answer would leave in
			// doubt a row the server is about to acknowledge.
			stmt, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			_, err := conn.ExecContext(stmt, "INSERT INTO "+Table+" (id, conn, at) VALUES (?, ?, NOW(6))", id, connection)
			cancel()
			if w.settle(id, err) != nil {
				break
			}
		}
		_ = conn.Close()
		sleep(ctx, 100*time.Millisecond)
	}
}

func (w *Writer) issue() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	return w.next
}

// settle records the outcome of id: a server's error refused it, any other left it in doubt.
func (w *Writer) settle(id int64, err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var refused *mysql.MySQLError
	switch {
	case err == nil:
		w.acked = append(w.acked, ack{id: id, at: time.Now()})
	case errors.As(err, &refused):
		w.failed = append(w.failed, id)
	default:
		w.inDoubt = append(w.inDoubt, id)
	}
	return err
}

// Acknowledged is how many rows the server has acknowledged so far.
func (w *Writer) Acknowledged() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// Result is what a writer did.
type Result struct {
	// First and Issued are the first and the last id the writer issued.
	First, Issued int64
	// Acked are the acknowledged ids in the order of their acknowledgements, each at AckedAt.
	Acked           []int64
	AckedAt         []time.Time
	Failed, InDoubt []int64
	// LongestGap is the longest time between two acknowledgements, and GapEnd when it ended.
	LongestGap time.Duration
	GapEnd     time.Time
}

// Stop stops writing and returns what was written.
func (w *Writer) Stop() Result {
	w.cancel()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	r := Result{First: w.first, Issued: w.next, Failed: slices.Clone(w.failed), InDoubt: slices.Clone(w.inDoubt)}
	acked := slices.Clone(w.acked)
	slices.SortFunc(acked, func(a, b ack) int { return a.at.Compare(b.at) })
	for i, a := range acked {
		r.Acked, r.AckedAt = append(r.Acked, a.id), append(r.AckedAt, a.at)
		if i > 0 && a.at.Sub(acked[i-1].at) > r.LongestGap {
			r.LongestGap, r.GapEnd = a.at.Sub(acked[i-1].at), a.at
		}
	}
	return r
}

// Verdict is what a member holds against what the writer was told.
type Verdict struct {
	// Lost are acknowledged rows the member does not hold.
	Lost []int64
	// Phantom are rows the member holds that were refused or never issued.
	Phantom []int64
	Rows    int
}

// Check reads every row a member holds and compares them with r; rows below r's first id are
// another writer's. No id can be there twice: it is the table's key.
func Check(ctx context.Context, db *sql.DB, r Result) (Verdict, error) {
	rows, err := db.QueryContext(ctx, "SELECT id FROM "+Table+" WHERE id >= ?", r.First)
	if err != nil {
		return Verdict{}, err
	}
	defer rows.Close()
	held := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return Verdict{}, err
		}
		held[id] = true
	}
	if err := rows.Err(); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Rows: len(held)}
	for _, id := range r.Acked {
		if !held[id] {
			v.Lost = append(v.Lost, id)
		}
	}
	refused := map[int64]bool{}
	for _, id := range r.Failed {
		refused[id] = true
	}
	for id := range held {
		if refused[id] || id > r.Issued {
			v.Phantom = append(v.Phantom, id)
		}
	}
	slices.Sort(v.Phantom)
	return v, nil
}

func (v Verdict) String() string {
	return fmt.Sprintf("%d rows, %d acknowledged rows lost %v, %d rows refused or never issued %v", v.Rows, len(v.Lost), head(v.Lost), len(v.Phantom), head(v.Phantom))
}

func head(ids []int64) []int64 { return ids[:min(len(ids), 10)] }

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// WaitFor waits until the writer has n more acknowledgements than it had when called, or until
// timeout passes.
func (w *Writer) WaitFor(n int, timeout time.Duration) error {
	want := w.Acknowledged() + n
	deadline := time.Now().Add(timeout)
	for w.Acknowledged() < want {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d acknowledged writes after %s, want %d", w.Acknowledged(), timeout, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}
