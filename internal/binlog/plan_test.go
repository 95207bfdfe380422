package binlog

import (
	"strings"
	"testing"
	"time"
)

// piece is a piece of file holding the sequence numbers first to last, at 10 bytes each after
// the file's 100 opening bytes.
func piece(session, file string, first, last uint64, fileFirst uint64) Piece {
	start := int64(0)
	if first != fileFirst {
		start = 100 + int64(first-fileFirst)*10
	}
	return Piece{Session: session, File: file, Start: start, End: 100 + int64(last-fileFirst+1)*10,
		FirstSeq: first, LastSeq: last, FirstTime: uint32(first), LastTime: uint32(last)}
}

func TestPieceNamesRoundTrip(t *testing.T) {
	p := Piece{Session: SessionName(time.Unix(1795824323, 5), 7), File: "binlog.000012", Start: 4, End: 77064,
		Domain: 0, FirstSeq: 186, LastSeq: 312, FirstTime: 1795824323, LastTime: 1795824324}
	got, err := ParsePiece(p.Name())
	if err != nil || got != p {
		t.Fatalf("ParsePiece(%q) = %+v, %v; want %+v", p.Name(), got, err, p)
	}
	for _, bad := range []string{"session/file", "s/f/1-2_0-3-4_5", "s/f/9-2_0-3-4_5-6", "s/f/1-2_0-5-4_5-6", "s/f/a-2_0-3-4_5-6"} {
		if _, err := ParsePiece(bad); err == nil {
			t.Errorf("ParsePiece(%q) accepted a name Name cannot make", bad)
		}
	}
}

func TestPlan(t *testing.T) {
	const old, next, third = "0001-1", "0002-2", "0003-1"
	for _, tc := range []struct {
		name   string
		pieces []Piece
		after  uint64
		want   []Segment
		last   uint64
		gap    string
	}{{
		name:   "one session, pieces in any order and one shipped twice",
		pieces: []Piece{piece(old, "b.000001", 5, 9, 1), piece(old, "b.000001", 1, 4, 1), piece(old, "b.000001", 5, 9, 1), piece(old, "b.000002", 10, 12, 10)},
		after:  3,
		want:   []Segment{{Session: old, From: 4, To: 12}},
		last:   12,
	}, {
		name: "a failover: what the old primary shipped past the new one's start is left out",
		pieces: []Piece{piece(old, "b.000001", 1, 20, 1),
			piece(next, "b.000007", 15, 30, 15)},
		after: 10,
		want:  []Segment{{Session: old, From: 11, To: 14}, {Session: next, From: 15, To: 30}},
		last:  30,
	}, {
		name: "a session wholly superseded by a later one that starts earlier",
		pieces: []Piece{piece(old, "b.000001", 10, 20, 10), piece(next, "b.000001", 12, 25, 12),
			piece(third, "b.000002", 5, 40, 5)},
		after: 6,
		want:  []Segment{{Session: third, From: 7, To: 40}},
		last:  40,
	}, {
		name:   "the base is past every archived transaction",
		pieces: []Piece{piece(old, "b.000001", 1, 20, 1)},
		after:  20,
		last:   20,
	}, {
		name:   "the archive begins after the base",
		pieces: []Piece{piece(old, "b.000001", 30, 40, 30)},
		after:  10,
		last:   10,
		gap:    "no archived transaction holds sequence numbers 11 to 29",
	}, {
		name:   "a hole inside a file ends the chain",
		pieces: []Piece{piece(old, "b.000001", 1, 9, 1), piece(old, "b.000001", 12, 20, 1)},
		after:  3,
		want:   []Segment{{Session: old, From: 4, To: 9}},
		last:   9,
		gap:    "bytes 190 to 210 are missing",
	}, {
		name:   "a missing file ends the chain",
		pieces: []Piece{piece(old, "b.000001", 1, 9, 1), piece(old, "b.000003", 15, 20, 15)},
		after:  3,
		want:   []Segment{{Session: old, From: 4, To: 9}},
		last:   9,
		gap:    "the file after b.000001 is missing",
	}, {
		name: "a hole the next session covers is no gap",
		pieces: []Piece{piece(old, "b.000001", 1, 9, 1), piece(old, "b.000001", 12, 20, 1),
			piece(next, "b.000004", 8, 25, 8)},
		after: 3,
		want:  []Segment{{Session: old, From: 4, To: 7}, {Session: next, From: 8, To: 25}},
		last:  25,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			chain, err := Plan(tc.pieces, 0, tc.after)
			if err != nil {
				t.Fatal(err)
			}
			if len(chain.Segments) != len(tc.want) {
				t.Fatalf("segments %+v, want %+v", chain.Segments, tc.want)
			}
			for i, s := range chain.Segments {
				w := tc.want[i]
				if s.Session != w.Session || s.From != w.From || s.To != w.To {
					t.Errorf("segment %d = %s %d..%d, want %s %d..%d", i, s.Session, s.From, s.To, w.Session, w.From, w.To)
				}
			}
			if chain.Last != tc.last {
				t.Errorf("last = %d, want %d", chain.Last, tc.last)
			}
			if (tc.gap == "") != (chain.Gap == "") || !strings.Contains(chain.Gap, tc.gap) {
				t.Errorf("gap = %q, want one saying %q", chain.Gap, tc.gap)
			}
		})
	}
}

func TestPlanRefusesAnotherDomain(t *testing.T) {
	p := piece("0001-1", "b.000001", 1, 5, 1)
	p.Domain = 3
	if _, err := Plan([]Piece{p}, 0, 0); err == nil || !strings.Contains(err.Error(), "domain 3") {
		t.Fatalf("Plan of another domain: %v", err)
	}
}

func TestParseGTID(t *testing.T) {
	if g, err := ParseGTID(" 0-12-345 "); err != nil || g != (GTID{Domain: 0, ServerID: 12, Seq: 345}) {
		t.Errorf("ParseGTID = %+v, %v", g, err)
	}
	for _, bad := range []string{"", "0-1", "0-1-2-3", "a-1-2", "0-1-", "0-4294967296-1", "-1-2-3"} {
		if _, err := ParseGTID(bad); err == nil {
			t.Errorf("ParseGTID(%q) accepted it", bad)
		}
	}
}

func TestReachOf(t *testing.T) {
	const old, next = "0001-1", "0002-2"
	for _, tc := range []struct {
		name   string
		pieces []Piece
		want   Reach
	}{
		{"empty", nil, Reach{}},
		{"one session from the start", []Piece{piece(old, "b.000001", 1, 20, 1)}, Reach{After: 0, Last: 20, LastTime: 20}},
		{"an archive that begins later", []Piece{piece(old, "b.000001", 30, 40, 30)}, Reach{After: 29, Last: 40, LastTime: 40}},
		{"a hole: only what follows it joins", []Piece{piece(old, "b.000001", 1, 9, 1), piece(old, "b.000001", 12, 20, 1),
			piece(next, "b.000002", 15, 30, 15)}, Reach{After: 14, Last: 30, LastTime: 30}},
		{"a failover joins", []Piece{piece(old, "b.000001", 1, 20, 1), piece(next, "b.000004", 15, 30, 15)}, Reach{After: 0, Last: 30, LastTime: 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReachOf(tc.pieces, 0)
			if err != nil || got != tc.want {
				t.Fatalf("ReachOf = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
