package backup

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/appkeeper/appkeeper/internal/binlog"
)

// DefaultShipInterval is how often the shipper looks for transactions to ship: at most this
// long after its commit a transaction is on its way to the storage.
const DefaultShipInterval = time.Second

// archiveListInterval is how often a shipping primary lists the archive again, to learn how far
// back it can replay: pieces may be deleted (by retention, or by a person) meanwhile.
const archiveListInterval = 5 * time.Minute

// maxPieceSize bounds the bytes read and shipped at once; a longer stretch of the file goes in
// several pieces.
const maxPieceSize = 16 << 20

// ShipOptions say which server's binary log is shipped, and where.
type ShipOptions struct {
	// Target is the storage; its key is the archive's root.
	Target      Target
	Credentials Credentials
	// Connection reaches the server whose binary log files are on this machine.
	Connection Connection
	// Interval between two looks at the binary log.
	Interval time.Duration
	// Domain is the GTID domain the archive follows.
	Domain uint32
	// StatusAddress, when set, is where GET /status tells what the shipper did, as JSON.
	StatusAddress string
	// EncryptionKey, when set, is the passphrase the pieces are sealed with.
	EncryptionKey string
	Log           *slog.Logger
}

// Ship ships the server's binary log while the server is a primary (it accepts writes), as the
// files grow, until ctx ends. Each time the server becomes a primary, or the shipper starts, a
// new session begins: it ships whole files from the one that holds the archive's newest
// transaction, so that what a failed primary had not shipped yet, and its successor received,
// is shipped again under the new session.
func Ship(ctx context.Context, o ShipOptions) error {
	store, err := openStorage(o.Target, o.Credentials)
	if err != nil {
		return err
	}
	if err := store.check(ctx); err != nil {
		return err
	}
	db, err := o.Connection.open()
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxIdleConns(1)
	if o.Interval <= 0 {
		o.Interval = DefaultShipInterval
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &shipper{o: o, store: store, db: db, status: &shipperStatus{}}
	if o.StatusAddress != "" {
		stop, err := serveStatus(o.StatusAddress, s.status, o.Log)
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.EncryptionKey != "" {
		if s.sealer, err = newPieceSealer(o.EncryptionKey, o.Target.Key); err != nil {
			return err
		}
	}
	ticker := time.NewTicker(o.Interval)
	defer ticker.Stop()
	// A failure is logged when it begins or changes, not at every look: a server that restarts
	// refuses connections for as long as it takes.
	failing := ""
	for {
		err := s.tick(ctx)
		switch {
		case ctx.Err() != nil:
		case err != nil && err.Error() != failing:
			failing = err.Error()
			s.status.failed(err)
			o.Log.Error("cannot ship the binary log", "error", err)
		case err == nil && failing != "":
			failing = ""
			o.Log.Info("shipping again")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// shipper remembers where it stands in the current session.
type shipper struct {
	o      ShipOptions
	store  storage
	db     *sql.DB
	sealer *pieceSealer

	session string
	file    string
	shipped int64
	state   binlog.ScanState
	status  *shipperStatus
	// readLimit is the size of the next read, larger than maxPieceSize while a transaction
	// larger than that is read.
	readLimit int
}

// serverState is what the shipper reads of the server at each look.
type serverState struct {
	readOnly bool
	serverID uint32
	basename string
}

func (s *shipper) tick(ctx context.Context) error {
	var st serverState
	var basename sql.NullString
	var version string
	err := s.db.QueryRowContext(ctx, "SELECT @@read_only, @@server_id, @@log_bin_basename, VERSION()").Scan(&st.readOnly, &st.serverID, &basename, &version)
	if err != nil {
		return s.o.Connection.describe(err)
	}
	s.status.domain = s.o.Domain
	if !strings.Contains(version, "MariaDB") {
		return fmt.Errorf("the server is MySQL %s: archiving its binary log needs MariaDB, whose GTIDs order the archive", version)
	}
	if !basename.Valid || basename.String == "" {
		return errors.New("the server keeps no binary log (log_bin is off)")
	}
	st.basename = basename.String
	if st.readOnly {
		if s.session != "" {
			s.o.Log.Info("the server is no longer the primary: its session ends", "session", s.session)
			s.session = ""
		}
		s.status.standBy()
		return nil
	}
	files, err := readIndex(st.basename)
	if err != nil {
		return err
	}
	if s.session == "" {
		if err := s.begin(ctx, st, files); err != nil {
			return err
		}
	} else if s.status.listedBefore(time.Now().Add(-archiveListInterval)) {
		if _, err := s.listArchive(ctx); err != nil {
			return err
		}
	}
	began := time.Now()
	for {
		next, err := s.shipFile(ctx, filepath.Dir(st.basename), files)
		if err != nil {
			return err
		}
		if !next {
			s.status.caughtUp(s.session, began)
			return nil
		}
	}
}

// begin starts a session at the newest file that begins at or before the archive's newest
// transaction; at the oldest file when the archive holds none of this domain.
func (s *shipper) begin(ctx context.Context, st serverState, files []string) error {
	if len(files) == 0 {
		return errors.New("the server's binary log index lists no file")
	}
	reach, err := s.listArchive(ctx)
	if err != nil {
		return err
	}
	archived := reach.Last
	start := files[0]
	if archived > 0 {
		for _, f := range files {
			position, err := readStartPosition(filepath.Join(filepath.Dir(st.basename), f))
			if err != nil {
				return err
			}
			if binlog.SeqIn(position, s.o.Domain) > archived {
				break
			}
			start = f
		}
	}
	s.session, s.file, s.shipped, s.state = binlog.SessionName(time.Now(), st.serverID), start, 0, binlog.ScanState{}
	s.o.Log.Info("the server is the primary: a session begins", "session", s.session, "file", start, "archivedUpTo", archived)
	return nil
}

// listArchive prunes what no kept backup needs, then reads what the archive can replay, and keeps
// it for the status.
func (s *shipper) listArchive(ctx context.Context) (binlog.Reach, error) {
	pieces, err := listPieces(ctx, s.store, s.o.Target.Key)
	if err != nil {
		return binlog.Reach{}, err
	}
	deleted, err := pruneArchive(ctx, s.store, s.o.Target.Key, s.o.Domain, pieces)
	if err != nil {
		return binlog.Reach{}, err
	}
	if deleted > 0 {
		s.o.Log.Info("pieces no kept backup needs were deleted", "pieces", deleted)
		if pieces, err = listPieces(ctx, s.store, s.o.Target.Key); err != nil {
			return binlog.Reach{}, err
		}
	}
	reach, err := binlog.ReachOf(pieces, s.o.Domain)
	if err != nil {
		return binlog.Reach{}, err
	}
	s.status.listed(reach, time.Now())
	return reach, nil
}

// shipFile ships what the current file holds past what was shipped, and moves on to the next
// file once the server writes there; next says it did.
func (s *shipper) shipFile(ctx context.Context, dir string, files []string) (next bool, err error) {
	later := ""
	for i, f := range files {
		if f == s.file && i+1 < len(files) {
			later = files[i+1]
		}
	}
	limit := max(s.readLimit, maxPieceSize)
	data, size, err := readFrom(filepath.Join(dir, s.file), s.shipped, limit)
	if errors.Is(err, os.ErrNotExist) && later != "" {
		s.o.Log.Error("the server removed a file before it was shipped whole: the archive has a gap", "file", s.file, "shipped", s.shipped)
		s.file, s.shipped, s.state = later, 0, binlog.ScanState{}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	scan, state, err := binlog.ScanFile(data, s.shipped, s.state)
	if err != nil {
		return false, fmt.Errorf("%s: %w", s.file, err)
	}
	before := s.shipped
	if scan.Complete > s.shipped {
		piece := binlog.NewPiece(s.session, s.file, s.shipped, scan.Complete, scan.Transactions)
		body := data[:scan.Complete-s.shipped]
		if s.sealer != nil {
			piece.Encrypted = true
			if body, err = s.sealer.seal(piece.Name(), body); err != nil {
				return false, err
			}
		}
		if err := s.store.put(ctx, s.o.Target.Key+"/"+piece.Key(), bytes.NewReader(body), int64(len(body))); err != nil {
			return false, err
		}
		s.shipped, s.state = scan.Complete, state
		if len(scan.Transactions) > 0 {
			s.status.shippedTo(scan.Transactions[len(scan.Transactions)-1])
		}
	}
	// The server writes no more to a file once the next one is in the index, which was read
	// before this file was: what this read found is all the file will hold.
	if later != "" && s.shipped == size {
		s.file, s.shipped, s.state = later, 0, binlog.ScanState{}
		return true, nil
	}
	if len(data) < limit {
		return false, nil
	}
	// A full read: more of the file waits. A transaction larger than the read is read again
	// whole, with a larger read.
	s.readLimit = maxPieceSize
	if s.shipped == before {
		s.readLimit = limit * 2
	}
	return true, nil
}

// readIndex lists the files of the binary log, oldest first, as the server's index names them.
func readIndex(basename string) ([]string, error) {
	data, err := os.ReadFile(basename + ".index")
	if err != nil {
		return nil, fmt.Errorf("cannot read the binary log's index: %w", err)
	}
	var files []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			files = append(files, filepath.Base(line))
		}
	}
	return files, nil
}

// readFrom reads at most limit bytes of the file from offset on, and the file's size.
func readFrom(path string, offset int64, limit int) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	n := min(info.Size()-offset, int64(limit))
	if n <= 0 {
		return nil, info.Size(), nil
	}
	data := make([]byte, n)
	if _, err := f.ReadAt(data, offset); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return data, info.Size(), nil
}

// readStartPosition reads the GTID list at the start of a file.
func readStartPosition(path string) ([]binlog.GTID, error) {
	data, _, err := readFrom(path, 0, 64<<10)
	if err != nil {
		return nil, err
	}
	position, err := binlog.StartPosition(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return position, nil
}

// listPieces reads the archive's index: the names of its pieces.
func listPieces(ctx context.Context, store storage, root string) ([]binlog.Piece, error) {
	keys, err := store.list(ctx, root)
	if err != nil {
		return nil, err
	}
	pieces := make([]binlog.Piece, 0, len(keys))
	for _, key := range keys {
		p, err := binlog.ParsePiece(strings.TrimPrefix(key, root+"/"))
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, p)
	}
	return pieces, nil
}
