package backup

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/appkeeper/appkeeper/internal/binlog"
)

// ShipperStatusPath is where the shipper serves its status.
const ShipperStatusPath = "/status"

// ShipperStatus is what a shipper tells of itself: whether it ships, how far, how late, and what
// the archive can replay.
type ShipperStatus struct {
	// Shipping is true while its server is the primary and a session ships its binary log.
	Shipping bool   `json:"shipping"`
	Session  string `json:"session,omitempty"`
	// LastShipped is the GTID of the newest transaction shipped, committed at LastShippedTime.
	LastShipped     string     `json:"lastShipped,omitempty"`
	LastShippedTime *time.Time `json:"lastShippedTime,omitempty"`
	// LagSeconds is how long ago the shipper last found every committed transaction shipped: a
	// transaction committed since has waited at most that long. 0 while it keeps up.
	LagSeconds float64 `json:"lagSeconds"`
	// Domain, ArchiveAfter and ArchiveLast say what the archive can replay: from a base backup
	// holding sequence number ArchiveAfter or later, up to ArchiveLast, committed at
	// ArchiveLastTime. ArchiveListed is when the archive was last listed.
	Domain          uint32     `json:"domain"`
	ArchiveAfter    uint64     `json:"archiveAfter"`
	ArchiveLast     uint64     `json:"archiveLast"`
	ArchiveLastTime *time.Time `json:"archiveLastTime,omitempty"`
	ArchiveListed   *time.Time `json:"archiveListed,omitempty"`
	// Error is why the last look failed, empty when it did not.
	Error string `json:"error,omitempty"`
}

// shipperStatus is the shipper's status, updated by the shipping loop and read by the server.
type shipperStatus struct {
	mu       sync.Mutex
	s        ShipperStatus
	caughtAt time.Time
	domain   uint32
}

func (st *shipperStatus) update(f func(*ShipperStatus)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	f(&st.s)
}

func (st *shipperStatus) snapshot(now time.Time) ShipperStatus {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.s
	s.Domain = st.domain
	if s.Shipping && !st.caughtAt.IsZero() {
		s.LagSeconds = max(0, now.Sub(st.caughtAt).Seconds())
	}
	return s
}

func (st *shipperStatus) standBy() {
	st.update(func(s *ShipperStatus) { s.Shipping, s.Session, s.Error = false, "", "" })
}

// caughtUp records that a look which began at began shipped every committed transaction.
func (st *shipperStatus) caughtUp(session string, began time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Shipping, st.s.Session, st.s.Error = true, session, ""
	st.caughtAt = began
}

func (st *shipperStatus) shippedTo(tx binlog.Transaction) {
	st.update(func(s *ShipperStatus) {
		at := time.Unix(int64(tx.Time), 0).UTC()
		s.LastShipped, s.LastShippedTime = tx.GTID.String(), &at
		if tx.GTID.Seq > s.ArchiveLast {
			s.ArchiveLast, s.ArchiveLastTime = tx.GTID.Seq, &at
		}
	})
}

func (st *shipperStatus) listed(reach binlog.Reach, now time.Time) {
	st.update(func(s *ShipperStatus) {
		s.ArchiveAfter, s.ArchiveListed = reach.After, &now
		if reach.Last >= s.ArchiveLast {
			at := time.Unix(int64(reach.LastTime), 0).UTC()
			s.ArchiveLast, s.ArchiveLastTime = reach.Last, &at
		}
	})
}

func (st *shipperStatus) listedBefore(t time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.s.ArchiveListed == nil || st.s.ArchiveListed.Before(t)
}

func (st *shipperStatus) failed(err error) {
	st.update(func(s *ShipperStatus) { s.Error = err.Error() })
}

// serveStatus serves GET /status at address until stop is called. The status holds no secret:
// the operator reads it from the pod's address.
func serveStatus(address string, st *shipperStatus, log *slog.Logger) (stop func(), err error) {
	listener, err := net.Listen("tcp", address)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+ShipperStatusPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st.snapshot(time.Now()))
	})
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("the status server stopped", "error", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(ctx)
	}, nil
}
