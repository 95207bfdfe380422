package binlog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Piece is a range of one binary log file as the archive keeps it: the bytes [Start, End) of
// File, shipped by Session, holding whole transactions only. Its name says what it holds, so
// that a listing of the archive is its index.
type Piece struct {
	Session string
	File    string
	Start   int64
	End     int64
	// Domain, FirstSeq and LastSeq bound the GTIDs of its transactions; both are 0 when it holds
	// none (the file's opening events, a rotation).
	Domain   uint32
	FirstSeq uint64
	LastSeq  uint64
	// FirstTime and LastTime bound when its transactions committed, in Unix seconds.
	FirstTime uint32
	LastTime  uint32
	// Encrypted says the stored object is sealed with the archive's key; its key is the name
	// with EncryptedSuffix.
	Encrypted bool
}

// EncryptedSuffix ends the key of an encrypted piece.
const EncryptedSuffix = ".enc"

// Key is the piece's key below the archive's root: its name, and the suffix of an encrypted
// object.
func (p Piece) Key() string {
	if p.Encrypted {
		return p.Name() + EncryptedSuffix
	}
	return p.Name()
}

// SessionName names a shipping session: when it began (so that names sort in time) and the
// server it read.
func SessionName(began time.Time, serverID uint32) string {
	return fmt.Sprintf("%019d-%d", began.UnixNano(), serverID)
}

// Name is the piece's key below the archive's root: session/file/range_gtids_times.
func (p Piece) Name() string {
	return fmt.Sprintf("%s/%s/%012d-%012d_%d-%d-%d_%d-%d", p.Session, p.File, p.Start, p.End,
		p.Domain, p.FirstSeq, p.LastSeq, p.FirstTime, p.LastTime)
}

// HasTransactions tells whether the piece holds a transaction.
func (p Piece) HasTransactions() bool { return p.LastSeq != 0 }

// ParsePiece reads a key that Key made.
func ParsePiece(key string) (Piece, error) {
	name, encrypted := strings.CutSuffix(key, EncryptedSuffix)
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return Piece{}, fmt.Errorf("%q is not an archived piece's name (session/file/range)", name)
	}
	p := Piece{Session: parts[0], File: parts[1], Encrypted: encrypted}
	fields := strings.FieldsFunc(parts[2], func(r rune) bool { return r == '_' || r == '-' })
	if len(fields) != 7 {
		return Piece{}, fmt.Errorf("%q is not an archived piece's name", name)
	}
	var numbers [7]uint64
	for i, f := range fields {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return Piece{}, fmt.Errorf("%q is not an archived piece's name: %w", name, err)
		}
		numbers[i] = n
	}
	p.Start, p.End = int64(numbers[0]), int64(numbers[1])
	p.Domain, p.FirstSeq, p.LastSeq = uint32(numbers[2]), numbers[3], numbers[4]
	p.FirstTime, p.LastTime = uint32(numbers[5]), uint32(numbers[6])
	if p.End <= p.Start || p.FirstSeq > p.LastSeq {
		return Piece{}, fmt.Errorf("%q names an empty or reversed range", name)
	}
	return p, nil
}

// NewPiece describes the bytes [start, end) of a file, which hold txs.
func NewPiece(session, file string, start, end int64, txs []Transaction) Piece {
	p := Piece{Session: session, File: file, Start: start, End: end}
	if len(txs) > 0 {
		first, last := txs[0], txs[len(txs)-1]
		p.Domain, p.FirstSeq, p.LastSeq = first.GTID.Domain, first.GTID.Seq, last.GTID.Seq
		p.FirstTime, p.LastTime = first.Time, last.Time
	}
	return p
}

// session is what one shipping session archived: its files, each from byte 0 on, as far as the
// pieces join.
type session struct {
	name  string
	files [][]Piece
	// first and last are the sequence numbers of its first and last whole transactions.
	first, last uint64
	lastTime    uint32
	// hole says where the pieces stop joining, when pieces exist past it.
	hole string
}

// sessions groups pieces by session, in the order the sessions began, and keeps of each the
// pieces that join from the start of its first file.
func sessions(pieces []Piece) []*session {
	bySession := map[string]map[string][]Piece{}
	for _, p := range pieces {
		if bySession[p.Session] == nil {
			bySession[p.Session] = map[string][]Piece{}
		}
		bySession[p.Session][p.File] = append(bySession[p.Session][p.File], p)
	}
	var out []*session
	for name, files := range bySession {
		s := &session{name: name}
		names := make([]string, 0, len(files))
		for f := range files {
			names = append(names, f)
		}
		sort.Strings(names)
		for i, f := range names {
			joined, hole := join(files[f])
			if len(joined) > 0 {
				s.files = append(s.files, joined)
			}
			if hole != "" || (i < len(names)-1 && !followedBy(f, names[i+1])) {
				if hole == "" {
					hole = fmt.Sprintf("the file after %s is missing (next is %s)", f, names[i+1])
				}
				s.hole = fmt.Sprintf("session %s: %s", name, hole)
				break
			}
		}
		for _, file := range s.files {
			for _, p := range file {
				if !p.HasTransactions() {
					continue
				}
				if s.first == 0 {
					s.first = p.FirstSeq
				}
				s.last, s.lastTime = p.LastSeq, p.LastTime
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// join sorts a file's pieces and keeps those that join from byte 0; the same range shipped
// twice (a retried upload) is kept once. hole describes the first gap.
func join(pieces []Piece) ([]Piece, string) {
	sort.Slice(pieces, func(i, j int) bool {
		if pieces[i].Start != pieces[j].Start {
			return pieces[i].Start < pieces[j].Start
		}
		return pieces[i].End > pieces[j].End
	})
	var joined []Piece
	var at int64
	for _, p := range pieces {
		switch {
		case p.Start == at:
			joined = append(joined, p)
			at = p.End
		case p.Start < at:
			continue
		default:
			return joined, fmt.Sprintf("%s: bytes %d to %d are missing", p.File, at, p.Start)
		}
	}
	return joined, ""
}

// followedBy tells whether next is the file the server writes after file: the same base name
// with the next number.
func followedBy(file, next string) bool {
	base, n, ok := fileNumber(file)
	nextBase, m, nextOK := fileNumber(next)
	return ok && nextOK && base == nextBase && m == n+1
}

func fileNumber(file string) (string, uint64, bool) {
	dot := strings.LastIndexByte(file, '.')
	if dot < 0 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(file[dot+1:], 10, 64)
	return file[:dot], n, err == nil
}
