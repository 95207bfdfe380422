// Package replication runs a MariaDB cluster of one primary and its replicas over SQL: it reads
// each member's replication state, decides which member may be primary without losing an
// acknowledged write, and moves the roles in small steps that can each be repeated.
package replication

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GTID is one MariaDB global transaction id, domain-server-sequence.
type GTID struct {
	Domain, Server uint32
	Seq            uint64
}

func (g GTID) String() string { return fmt.Sprintf("%d-%d-%d", g.Domain, g.Server, g.Seq) }

// Position is a MariaDB GTID position: the last transaction of each replication domain, as the
// server variables gtid_binlog_pos, gtid_slave_pos and a replica's Gtid_IO_Pos list them.
type Position map[uint32]GTID

// ParsePosition reads a comma-separated GTID list such as "0-11-590,1-12-7"; the empty string is
// the empty position.
func ParsePosition(s string) (Position, error) {
	p := Position{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := strings.Split(part, "-")
		if len(fields) != 3 {
			return nil, fmt.Errorf("GTID %q is not domain-server-sequence", part)
		}
		domain, err1 := strconv.ParseUint(fields[0], 10, 32)
		server, err2 := strconv.ParseUint(fields[1], 10, 32)
		seq, err3 := strconv.ParseUint(fields[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("GTID %q is not three decimal numbers", part)
		}
		if _, twice := p[uint32(domain)]; twice {
			return nil, fmt.Errorf("position %q names domain %d twice", s, domain)
		}
		p[uint32(domain)] = GTID{Domain: uint32(domain), Server: uint32(server), Seq: seq}
	}
	return p, nil
}

// String lists the position by domain, as the server does.
func (p Position) String() string {
	domains := make([]uint32, 0, len(p))
	for d := range p {
		domains = append(domains, d)
	}
	slices.Sort(domains)
	parts := make([]string, len(domains))
	for i, d := range domains {
		parts[i] = p[d].String()
	}
	return strings.Join(parts, ",")
}

// Seq is the sequence number of the position's last transaction in domain, 0 when it has none.
func (p Position) Seq(domain uint32) uint64 { return p[domain].Seq }

// Covers tells whether every domain's sequence in p is at or beyond the one in q: in a cluster
// whose members all follow one history, a member at p holds every transaction of a member at q.
func (p Position) Covers(q Position) bool {
	for d, g := range q {
		if p[d].Seq < g.Seq {
			return false
		}
	}
	return true
}

// Newest is, in each domain, the later of p's and q's last transaction; p's when both end at
// the same sequence number.
func (p Position) Newest(q Position) Position {
	newest := Position{}
	for d, g := range p {
		newest[d] = g
	}
	for d, g := range q {
		if g.Seq > newest[d].Seq {
			newest[d] = g
		}
	}
	return newest
}

// Equal tells whether both positions end at the same transactions.
func (p Position) Equal(q Position) bool {
	if len(p) != len(q) {
		return false
	}
	for d, g := range q {
		if p[d] != g {
			return false
		}
	}
	return true
}
