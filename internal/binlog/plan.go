package binlog

import (
	"fmt"
	"math"
)

// Segment is what one session gives a replay: the transactions From to To of its files.
type Segment struct {
	Session string
	Files   [][]Piece
	From    uint64
	To      uint64
}

// Chain is the history the archive holds after a position: the transactions that follow it
// without a gap, each from the session that holds it as the cluster kept it.
type Chain struct {
	Segments []Segment
	// Last is the sequence number of the chain's last transaction, and LastTime when it
	// committed (Unix seconds); Last is the position itself when nothing follows it.
	Last     uint64
	LastTime uint32
	// Gap says why the chain stops before the newest archived transaction; empty when it
	// reaches it.
	Gap string
}

// Plan finds the transactions of domain archived after sequence number after, the position of
// a base backup. A sequence number can be held by several sessions: a primary that lost its
// role may have shipped transactions past the failover that no replica acknowledged, and that
// the cluster then lost, while the new primary's session holds the transactions that were kept
// (its binary log has what it replicated too). So each number is taken from the session that
// began last among those that begin at or before it.
func Plan(pieces []Piece, domain uint32, after uint64) (Chain, error) {
	for _, p := range pieces {
		if p.HasTransactions() && p.Domain != domain {
			return Chain{}, fmt.Errorf("the archive holds transactions of GTID domain %d (%s/%s); only domain %d is replayed", p.Domain, p.Session, p.File, domain)
		}
	}
	all := sessions(pieces)
	var ss []*session
	for _, s := range all {
		if s.last != 0 {
			ss = append(ss, s)
		}
	}
	chain := Chain{Last: after}
	// startsLater[i] is the lowest first sequence number of the sessions after i.
	startsLater := make([]uint64, len(ss)+1)
	startsLater[len(ss)] = math.MaxUint64
	for i := len(ss) - 1; i >= 0; i-- {
		startsLater[i] = min(startsLater[i+1], ss[i].first)
	}
	var newest uint64
	for i, s := range ss {
		newest = max(newest, s.last)
		bound := startsLater[i+1]
		if s.first >= bound || s.last <= chain.Last {
			continue
		}
		if chain.Gap != "" {
			continue
		}
		if s.first > chain.Last+1 {
			chain.Gap = fmt.Sprintf("no archived transaction holds sequence numbers %d to %d of domain %d", chain.Last+1, s.first-1, domain)
			continue
		}
		to := s.last
		if bound != math.MaxUint64 {
			to = min(to, bound-1)
		}
		if to <= chain.Last {
			continue // what it holds past the position, later sessions hold as the cluster kept it
		}
		chain.Segments = append(chain.Segments, Segment{Session: s.name, Files: s.files, From: chain.Last + 1, To: to})
		chain.Last, chain.LastTime = to, s.timeOf(to)
		if to < s.last || s.hole == "" {
			continue
		}
		if i == len(ss)-1 || startsLater[i+1] > to+1 {
			chain.Gap = s.hole
		}
	}
	if chain.Gap == "" && newest > chain.Last {
		chain.Gap = fmt.Sprintf("the archive holds sequence numbers up to %d of domain %d, but no session joins them to %d", newest, domain, chain.Last)
	}
	return chain, nil
}

// timeOf is when the piece holding sequence number seq ends: the commit time of its last
// transaction, which is that of seq or at most the length of one shipping interval later.
func (s *session) timeOf(seq uint64) uint32 {
	for _, file := range s.files {
		for _, p := range file {
			if p.HasTransactions() && p.FirstSeq <= seq && seq <= p.LastSeq {
				return p.LastTime
			}
		}
	}
	return s.lastTime
}

// Reach is how far back the archive can replay: the lowest position from which its transactions
// join without a gap up to its newest, the newest, and the gap that stops anything earlier.
type Reach struct {
	// After is the lowest position (a sequence number already held by a base backup) a replay
	// can start from; Last is the newest archived sequence number and LastTime its commit time.
	After    uint64
	Last     uint64
	LastTime uint32
}

// ReachOf finds the reach of the archive in domain. A position joins when Plan from it has no
// gap; if it joins, so does every later one, so the lowest is found by bisection.
func ReachOf(pieces []Piece, domain uint32) (Reach, error) {
	var last uint64
	var lastTime uint32
	for _, p := range pieces {
		if p.HasTransactions() && p.Domain == domain && p.LastSeq >= last {
			last, lastTime = p.LastSeq, max(lastTime, p.LastTime)
		}
	}
	if last == 0 {
		return Reach{}, nil
	}
	low, high := uint64(0), last // Plan from high joins: it replays nothing
	for low < high {
		mid := low + (high-low)/2
		chain, err := Plan(pieces, domain, mid)
		if err != nil {
			return Reach{}, err
		}
		if chain.Gap == "" {
			high = mid
		} else {
			low = mid + 1
		}
	}
	return Reach{After: low, Last: last, LastTime: lastTime}, nil
}
