// Package binlog reads MariaDB binary log files as they grow: their events, the transactions
// those events make up, and where a file can be cut so that every piece holds whole
// transactions. It knows the event header, the format description, GTID and the events that end
// a transaction; every other event is carried as bytes.
package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Magic opens every binary log file.
const Magic = "\xfebin"

// headerSize is the size of an event's header: timestamp, type, server id, size, next
// position, flags.
const headerSize = 19

// Event types this package reads; the others are carried as they are.
const (
	typeQuery             = 2
	typeStop              = 3
	typeRotate            = 4
	typeFormatDescription = 15
	typeXID               = 16
	typeGTID              = 162
	typeStartEncryption   = 164
)

// gtidStandalone is the flag of a GTID event whose transaction is one statement (DDL) with no
// COMMIT of its own.
const gtidStandalone = 1

// checksumCRC32 is the format description's code for a CRC32 after every event.
const checksumCRC32 = 1

// maxEventSize bounds what is taken for an event: MariaDB's max_allowed_packet is at most 1 GiB.
const maxEventSize = 1 << 30

// Event is one event of a file: where it starts, and what its header says.
type Event struct {
	Offset   int64
	Time     uint32
	Type     byte
	ServerID uint32
	Size     uint32
}

// End is the offset just past the event.
func (e Event) End() int64 { return e.Offset + int64(e.Size) }

// GTID names one transaction: its replication domain, the server that first committed it and
// its sequence number in the domain.
type GTID struct {
	Domain   uint32
	ServerID uint32
	Seq      uint64
}

func (g GTID) String() string { return fmt.Sprintf("%d-%d-%d", g.Domain, g.ServerID, g.Seq) }

// ParseGTID reads "domain-server-sequence", such as 0-1-1234.
func ParseGTID(s string) (GTID, error) {
	parts := strings.Split(strings.TrimSpace(s), "-")
	bad := fmt.Errorf("%q is not a GTID: want domain-server-sequence, such as 0-1-1234", s)
	if len(parts) != 3 {
		return GTID{}, bad
	}
	var numbers [3]uint64
	for i, part := range parts {
		n, err := strconv.ParseUint(part, 10, 64)
		if err != nil || (i < 2 && n > math.MaxUint32) {
			return GTID{}, bad
		}
		numbers[i] = n
	}
	return GTID{Domain: uint32(numbers[0]), ServerID: uint32(numbers[1]), Seq: numbers[2]}, nil
}

// ParsePosition reads a GTID position as @@gtid_binlog_pos gives it: one GTID per domain,
// separated by commas; an empty position holds none.
func ParsePosition(s string) ([]GTID, error) {
	var position []GTID
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		g, err := ParseGTID(part)
		if err != nil {
			return nil, err
		}
		position = append(position, g)
	}
	return position, nil
}

// Transaction is one transaction of a file: its GTID, the bytes of its events and when it
// committed (the time of its last event, to the second).
type Transaction struct {
	GTID   GTID
	Offset int64
	End    int64
	Time   uint32
}

// Scan is what a read of a file's bytes found: the transactions that are whole, and how far the
// bytes hold only whole events outside any transaction still being written.
type Scan struct {
	Transactions []Transaction
	// Complete is the offset up to which the file can be cut: every transaction before it is
	// whole. It is at least the offset the scan began at.
	Complete int64
	// FormatEnd is the end of the format description when the scan began at the file's start.
	FormatEnd int64
}

// ErrEncrypted is returned for a file the server encrypted: its events cannot be read here.
var ErrEncrypted = errors.New("the binary log is encrypted by the server (encrypt_binlog), so its transactions cannot be read")

// scanner reads events from bytes that begin at a file's offset base.
type scanner struct {
	data     []byte
	base     int64
	checksum bool
}

// ScanState is what a scan needs to know of the file before its offset: whether events end
// with a checksum. It is found in the format description at the file's start.
type ScanState struct {
	Checksum bool
}

// ScanFile reads data, the bytes of a file from offset base on, and returns its whole
// transactions. At base 0 the data begins with the magic and the format description, which
// sets the state; a later scan passes the state the first one returned.
func ScanFile(data []byte, base int64, state ScanState) (Scan, ScanState, error) {
	s := scanner{data: data, base: base, checksum: state.Checksum}
	result := Scan{Complete: base}
	pos := 0
	if base == 0 {
		if len(data) < len(Magic) {
			return result, state, nil
		}
		if string(data[:len(Magic)]) != Magic {
			return result, state, errors.New("the file does not begin as a binary log does")
		}
		pos = len(Magic)
		result.Complete = int64(pos)
	}
	var open *Transaction
	standalone := false
	for {
		e, body, ok, err := s.event(pos)
		if err != nil {
			return result, state, err
		}
		if !ok {
			return result, ScanState{Checksum: s.checksum}, nil
		}
		pos = int(e.End() - base)
		switch e.Type {
		case typeStartEncryption:
			return result, state, ErrEncrypted
		case typeFormatDescription:
			s.checksum = formatHasChecksum(body)
			result.FormatEnd = e.End()
		case typeRotate, typeStop:
			// A transaction still open when the file ends was cut short: it never completes.
			open = nil
		case typeGTID:
			g, flags, err := readGTID(body, e.ServerID)
			if err != nil {
				return result, state, fmt.Errorf("event at %d: %w", e.Offset, err)
			}
			// A transaction left open by a new one was cut short by the server; it never ends.
			open = &Transaction{GTID: g, Offset: e.Offset}
			standalone = flags&gtidStandalone != 0
			continue
		}
		if open == nil {
			result.Complete = e.End()
			continue
		}
		if ends(e, s.queryText(body), standalone) {
			open.End, open.Time = e.End(), e.Time
			result.Transactions = append(result.Transactions, *open)
			result.Complete = e.End()
			open = nil
		}
	}
}

// ends tells whether e closes the open transaction: its XID, its COMMIT or ROLLBACK, or the one
// statement of a standalone one.
func ends(e Event, query string, standalone bool) bool {
	switch e.Type {
	case typeXID:
		return true
	case typeQuery:
		if standalone {
			return true
		}
		q := strings.ToUpper(strings.TrimSpace(query))
		return q == "COMMIT" || q == "ROLLBACK"
	}
	return false
}

// event reads the event at pos; ok is false when the bytes end before it does.
func (s *scanner) event(pos int) (Event, []byte, bool, error) {
	if len(s.data)-pos < headerSize {
		return Event{}, nil, false, nil
	}
	h := s.data[pos : pos+headerSize]
	e := Event{
		Offset:   s.base + int64(pos),
		Time:     binary.LittleEndian.Uint32(h[0:4]),
		Type:     h[4],
		ServerID: binary.LittleEndian.Uint32(h[5:9]),
		Size:     binary.LittleEndian.Uint32(h[9:13]),
	}
	if e.Size < headerSize || e.Size > maxEventSize {
		return e, nil, false, fmt.Errorf("the event at %d has size %d: the file is not a binary log or is corrupt", e.Offset, e.Size)
	}
	if len(s.data)-pos < int(e.Size) {
		return Event{}, nil, false, nil
	}
	body := s.data[pos+headerSize : pos+int(e.Size)]
	if s.checksum && e.Type != typeFormatDescription {
		if len(body) < 4 {
			return e, nil, false, fmt.Errorf("the event at %d is too short for its checksum", e.Offset)
		}
		body = body[:len(body)-4]
	}
	return e, body, true, nil
}

// formatHasChecksum reads the checksum algorithm a format description announces: the byte
// before the description's own CRC32.
func formatHasChecksum(body []byte) bool {
	return len(body) >= 5 && body[len(body)-5] == checksumCRC32
}

// readGTID reads a GTID event's body: sequence number, domain, flags.
func readGTID(body []byte, serverID uint32) (GTID, byte, error) {
	if len(body) < 13 {
		return GTID{}, 0, errors.New("the GTID event is too short")
	}
	return GTID{
		Seq:      binary.LittleEndian.Uint64(body[0:8]),
		Domain:   binary.LittleEndian.Uint32(body[8:12]),
		ServerID: serverID,
	}, body[12], nil
}

// queryText is the statement of a query event's body: after the fixed part, the status
// variables and the database name.
func (s *scanner) queryText(body []byte) string {
	const fixed = 13 // thread id 4, exec time 4, database length 1, error code 2, status length 2
	if len(body) < fixed {
		return ""
	}
	dbLen := int(body[8])
	statusLen := int(binary.LittleEndian.Uint16(body[11:13]))
	start := fixed + statusLen + dbLen + 1
	if start > len(body) {
		return ""
	}
	return string(body[start:])
}

// typeGTIDList opens each file after the format description: the last GTID of every domain
// written before the file.
const typeGTIDList = 163

// StartPosition reads the GTID list at the start of a file: where each domain stood when the
// file began. It reads only the file's opening events, which data must hold.
func StartPosition(data []byte) ([]GTID, error) {
	if len(data) < len(Magic) || string(data[:len(Magic)]) != Magic {
		return nil, errors.New("the file does not begin as a binary log does")
	}
	s := scanner{data: data}
	pos := len(Magic)
	for {
		e, body, ok, err := s.event(pos)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errors.New("the file ends before its GTID list")
		}
		pos = int(e.End())
		switch e.Type {
		case typeFormatDescription:
			s.checksum = formatHasChecksum(body)
		case typeStartEncryption:
			return nil, ErrEncrypted
		case typeGTIDList:
			return readGTIDList(body)
		case typeGTID:
			return nil, errors.New("the file has a transaction before its GTID list")
		}
	}
}

func readGTIDList(body []byte) ([]GTID, error) {
	if len(body) < 4 {
		return nil, errors.New("the GTID list event is too short")
	}
	count := int(binary.LittleEndian.Uint32(body[0:4]) & (1<<28 - 1))
	if len(body) < 4+16*count {
		return nil, errors.New("the GTID list event is shorter than its count")
	}
	list := make([]GTID, count)
	for i := range list {
		entry := body[4+16*i:]
		list[i] = GTID{
			Domain:   binary.LittleEndian.Uint32(entry[0:4]),
			ServerID: binary.LittleEndian.Uint32(entry[4:8]),
			Seq:      binary.LittleEndian.Uint64(entry[8:16]),
		}
	}
	return list, nil
}

// SeqIn is the sequence number of domain in position, 0 when it holds none.
func SeqIn(position []GTID, domain uint32) uint64 {
	for _, g := range position {
		if g.Domain == domain {
			return g.Seq
		}
	}
	return 0
}
