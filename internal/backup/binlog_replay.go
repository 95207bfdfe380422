package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/appkeeper/appkeeper/internal/binlog"
)

// binlogTool is the MariaDB tool that turns binary log files into SQL.
const binlogTool = "mariadb-binlog"

// ReplayOptions say which base backup a replay starts from, which archive it reads and where it
// stops.
type ReplayOptions struct {
	// Target is the storage; its key is the base backup's.
	Target      Target
	Credentials Credentials
	// Archive is the key of the binary log archive's root in the same storage; when empty, the
	// one the base backup's manifest names.
	Archive string
	// UntilTime stops the replay before the first transaction that committed at or after it.
	UntilTime time.Time
	// UntilGTID stops the replay after the transaction with this GTID.
	UntilGTID string
	// Out is the SQL file written, for the server's initialisation to run after the base.
	Out    string
	Domain uint32
	// EncryptionKey is the passphrase of an encrypted archive.
	EncryptionKey string
	// UnlessInitialized, when set, is a server's data directory: when it already holds one, the
	// server is restarting, not starting for the first time, and nothing is replayed.
	UnlessInitialized string
}

// Window is what an archive can restore from one base backup: any instant from From to To.
type Window struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Domain, FromSeq and ToSeq bound the GTIDs a target can name: the base backup's position
	// (replaying nothing) to the archive's newest transaction.
	Domain  uint32 `json:"domain"`
	FromSeq uint64 `json:"fromSeq"`
	ToSeq   uint64 `json:"toSeq"`
	// Gap says why the archive cannot reach its newest transaction, empty when it can.
	Gap string `json:"gap,omitempty"`
}

func (w Window) String() string {
	return fmt.Sprintf("from %s to %s (GTIDs of domain %d with sequence numbers %d to %d)",
		w.From.Format(time.RFC3339), w.To.Format(time.RFC3339), w.Domain, w.FromSeq, w.ToSeq)
}

// Replay writes, as SQL, the archived transactions that follow the base backup up to the
// target: a time or a GTID inside the window the archive holds, or an error naming the window.
func Replay(ctx context.Context, o ReplayOptions) (Result, error) {
	if o.UntilTime.IsZero() == (o.UntilGTID == "") {
		return Result{}, usageError{errors.New("give the target: a time or a GTID, not both")}
	}
	if o.UnlessInitialized != "" {
		initialized, err := dataDirInitialized(o.UnlessInitialized)
		if err != nil || initialized {
			return Result{}, err
		}
	}
	store, err := openStorage(o.Target, o.Credentials)
	if err != nil {
		return Result{}, err
	}
	m, err := readManifest(ctx, store, o.Target.Key)
	if err != nil {
		return Result{}, err
	}
	base, err := replayBase(m, o.Domain)
	if err != nil {
		return Result{}, err
	}
	if o.Archive == "" {
		if o.Archive = m.BinlogArchive; o.Archive == "" {
			return Result{}, fmt.Errorf("the backup %s was taken while point-in-time recovery was off: it names no binary log archive to replay", m.Key)
		}
	}
	pieces, err := listPieces(ctx, store, o.Archive)
	if err != nil {
		return Result{}, err
	}
	chain, err := binlog.Plan(pieces, o.Domain, base.Seq)
	if err != nil {
		return Result{}, err
	}
	window := replayWindow(m, base, chain)
	stop, err := replayStop(o, window, base, chain)
	if err != nil {
		return Result{}, err
	}
	r := replayer{store: store, archive: o.Archive, stop: stop, next: base.Seq + 1, dir: filepath.Dir(o.Out)}
	if o.EncryptionKey != "" {
		if r.sealer, err = newPieceSealer(o.EncryptionKey, o.Archive); err != nil {
			return Result{}, err
		}
	}
	files, err := r.extract(ctx, chain)
	defer func() {
		for _, f := range files {
			_ = os.Remove(f)
		}
	}()
	if err != nil {
		return Result{}, err
	}
	if err := toSQL(ctx, files, o.Out); err != nil {
		return Result{}, err
	}
	res := Result{Key: o.Target.Key, GTIDPosition: m.GTIDPosition, Replayed: r.replayed, Window: &window}
	if r.replayed > 0 {
		res.ReplayedThrough = r.last.String()
	}
	return res, nil
}

// replayBase is the position of domain in the base backup.
func replayBase(m *manifest, domain uint32) (binlog.GTID, error) {
	if m.BinlogPosition == "" {
		return binlog.GTID{}, fmt.Errorf("the backup %s was taken while the server kept no binary log, so no archived transaction can follow it", m.Key)
	}
	position, err := binlog.ParsePosition(m.GTIDPosition)
	if err != nil {
		return binlog.GTID{}, fmt.Errorf("the backup %s: %w", m.Key, err)
	}
	for _, g := range position {
		if g.Domain == domain {
			return g, nil
		}
	}
	return binlog.GTID{Domain: domain}, nil
}

func replayWindow(m *manifest, base binlog.GTID, chain binlog.Chain) Window {
	w := Window{From: m.Created.Truncate(time.Second).Add(time.Second).UTC(), Domain: base.Domain, FromSeq: base.Seq, ToSeq: chain.Last, Gap: chain.Gap}
	w.To = w.From
	if chain.Last > base.Seq {
		w.To = time.Unix(int64(chain.LastTime)+1, 0).UTC()
		if w.To.Before(w.From) {
			w.To = w.From
		}
	}
	return w
}

// replayStop checks the target against the window and says where the replay stops.
func replayStop(o ReplayOptions, w Window, base binlog.GTID, chain binlog.Chain) (replayTarget, error) {
	outside := func(what string) error {
		msg := fmt.Sprintf("the target %s is %s: the archive can restore %s", what, "outside the recoverable window", w)
		if w.Gap != "" {
			msg += "; it stops there because " + w.Gap
		}
		return errors.New(msg)
	}
	if !o.UntilTime.IsZero() {
		t := o.UntilTime.UTC()
		if t.Before(w.From) || t.After(w.To) {
			return replayTarget{}, outside(t.Format(time.RFC3339))
		}
		return replayTarget{time: uint32(t.Unix()), lastSeq: chain.Last}, nil
	}
	g, err := binlog.ParseGTID(o.UntilGTID)
	if err != nil {
		return replayTarget{}, usageError{err}
	}
	if g.Domain != o.Domain || g.Seq < base.Seq || g.Seq > chain.Last {
		return replayTarget{}, outside("GTID " + g.String())
	}
	return replayTarget{gtid: &g, lastSeq: g.Seq}, nil
}

// replayTarget is where a replay stops: before the first transaction committed at or after
// time (when set), and after sequence number lastSeq, which must then be gtid when it is set.
type replayTarget struct {
	time    uint32
	gtid    *binlog.GTID
	lastSeq uint64
}

// replayer writes the transactions of a chain that the target keeps into binary log files of
// its own, each its source file's opening events and the transactions kept.
type replayer struct {
	store    storage
	sealer   *pieceSealer
	archive  string
	stop     replayTarget
	dir      string
	next     uint64
	last     binlog.GTID
	replayed int
	done     bool
}

func (r *replayer) extract(ctx context.Context, chain binlog.Chain) ([]string, error) {
	var files []string
	if r.stop.gtid != nil && r.stop.lastSeq < r.next {
		return nil, nil // the target is the base backup itself
	}
	for _, segment := range chain.Segments {
		for _, pieces := range segment.Files {
			if r.done {
				return files, nil
			}
			f, err := os.CreateTemp(r.dir, ".replay-*.bin")
			if err != nil {
				return files, err
			}
			files = append(files, f.Name())
			err = r.extractFile(ctx, segment, pieces, f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return files, err
			}
		}
	}
	if !r.done && r.stop.gtid != nil {
		return files, fmt.Errorf("the archive ends before the GTID %s", r.stop.gtid)
	}
	return files, nil
}

// extractFile reads one file's pieces in order and writes what the replay keeps of them.
func (r *replayer) extractFile(ctx context.Context, segment binlog.Segment, pieces []binlog.Piece, out io.Writer) error {
	var state binlog.ScanState
	for _, p := range pieces {
		data, err := r.read(ctx, p)
		if err != nil {
			return err
		}
		scan, next, err := binlog.ScanFile(data, p.Start, state)
		if err != nil {
			return fmt.Errorf("the archived piece %s: %w", p.Name(), err)
		}
		if scan.Complete != p.End {
			return fmt.Errorf("the archived piece %s does not hold whole transactions", p.Name())
		}
		state = next
		if p.Start == 0 {
			if _, err := out.Write(data[:scan.FormatEnd]); err != nil {
				return err
			}
		}
		for _, tx := range scan.Transactions {
			if r.done {
				return nil
			}
			if tx.GTID.Seq < segment.From || tx.GTID.Seq > segment.To {
				continue
			}
			keep, err := r.keep(tx)
			if err != nil || !keep {
				return err
			}
			if _, err := out.Write(data[tx.Offset-p.Start : tx.End-p.Start]); err != nil {
				return err
			}
		}
	}
	return nil
}

// keep tells whether the replay takes tx, the next transaction of the chain, and marks it done
// once the target is reached.
func (r *replayer) keep(tx binlog.Transaction) (bool, error) {
	if tx.GTID.Seq != r.next {
		return false, fmt.Errorf("the archive goes from sequence number %d to %s: a transaction is missing", r.next-1, tx.GTID)
	}
	if r.stop.gtid == nil && tx.Time >= r.stop.time {
		r.done = true
		return false, nil
	}
	if r.stop.gtid != nil && tx.GTID.Seq == r.stop.gtid.Seq && tx.GTID != *r.stop.gtid {
		return false, fmt.Errorf("the archive's transaction %d is %s, not %s", tx.GTID.Seq, tx.GTID, r.stop.gtid)
	}
	r.next++
	r.last = tx.GTID
	r.replayed++
	if tx.GTID.Seq >= r.stop.lastSeq {
		r.done = true
	}
	return true, nil
}

func (r *replayer) read(ctx context.Context, p binlog.Piece) ([]byte, error) {
	key := r.archive + "/" + p.Key()
	if p.Encrypted && r.sealer == nil {
		return nil, errNoPassphrase
	}
	body, err := r.store.get(ctx, key)
	if errors.Is(err, errNotFound) {
		return nil, fmt.Errorf("the archived piece %s is gone from the storage: the archive has a gap there", key)
	}
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("cannot read the archived piece %s: %w", key, err)
	}
	if p.Encrypted {
		if data, err = r.sealer.open(p.Name(), data); err != nil {
			return nil, err
		}
	}
	if int64(len(data)) != p.End-p.Start {
		return nil, fmt.Errorf("the archived piece %s holds %d bytes, its name says %d", key, len(data), p.End-p.Start)
	}
	return data, nil
}

// toSQL turns the files into SQL at out, through MariaDB's own tool; out appears only whole.
func toSQL(ctx context.Context, files []string, out string) error {
	return writeAtomically(out, 0o644, func(w io.Writer) error {
		if len(files) == 0 {
			_, err := io.WriteString(w, "-- No archived transaction follows the base backup before the target.\n")
			return err
		}
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, binlogTool, append([]string{"--no-defaults"}, files...)...)
		cmd.Stdout, cmd.Stderr = w, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w: %s", binlogTool, err, strings.TrimSpace(stderr.String()))
		}
		return nil
	})
}
