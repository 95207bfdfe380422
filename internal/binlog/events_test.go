package binlog

import (
	"encoding/binary"
	"testing"
)

// fileBuilder writes a binary log as MariaDB does, with a CRC32 slot after every event (the
// scanner does not check it).
type fileBuilder struct {
	data []byte
	time uint32
}

func newFile() *fileBuilder {
	b := &fileBuilder{data: []byte(Magic), time: 1000}
	// The format description: version 4, server version, creation time, header length, then
	// the checksum algorithm (CRC32) and the description's own CRC32.
	body := make([]byte, 2+50+4+1)
	binary.LittleEndian.PutUint16(body, 4)
	body = append(body, checksumCRC32, 0, 0, 0, 0)
	b.raw(typeFormatDescription, 1, body)
	b.event(typeGTIDList, 1, []byte{0, 0, 0, 0})
	return b
}

func (b *fileBuilder) raw(kind byte, server uint32, body []byte) {
	h := make([]byte, headerSize)
	binary.LittleEndian.PutUint32(h[0:4], b.time)
	h[4] = kind
	binary.LittleEndian.PutUint32(h[5:9], server)
	size := headerSize + len(body)
	binary.LittleEndian.PutUint32(h[9:13], uint32(size))
	binary.LittleEndian.PutUint32(h[13:17], uint32(len(b.data)+size))
	b.data = append(append(b.data, h...), body...)
}

func (b *fileBuilder) event(kind byte, server uint32, body []byte) {
	b.raw(kind, server, append(append([]byte{}, body...), 0, 0, 0, 0))
}

func (b *fileBuilder) gtid(seq uint64, standalone bool) {
	body := make([]byte, 13)
	binary.LittleEndian.PutUint64(body, seq)
	if standalone {
		body[12] = gtidStandalone
	}
	b.event(typeGTID, 1, body)
}

func (b *fileBuilder) query(text string) {
	body := make([]byte, 13)
	body = append(body, 0) // no database: its name is just the NUL
	b.event(typeQuery, 1, append(body, text...))
}

// transaction writes a row transaction ended by an XID.
func (b *fileBuilder) transaction(seq uint64) int {
	b.time++
	b.gtid(seq, false)
	b.event(19, 1, make([]byte, 30)) // a table map
	b.event(30, 1, make([]byte, 40)) // a write of rows
	b.event(typeXID, 1, make([]byte, 8))
	return len(b.data)
}

func TestScanFindsWholeTransactionsOnly(t *testing.T) {
	b := newFile()
	opening := len(b.data)
	first := b.transaction(1)
	b.time++
	b.gtid(2, true)
	b.query("CREATE TABLE t (id INT)")
	ddl := len(b.data)
	b.time++
	b.gtid(3, false)
	b.query("BEGIN")
	b.event(30, 1, make([]byte, 40))
	b.query("COMMIT")
	nonTransactional := len(b.data)
	last := b.transaction(4)

	scan, state, err := ScanFile(b.data, 0, ScanState{})
	if err != nil {
		t.Fatal(err)
	}
	if !state.Checksum || scan.FormatEnd == 0 {
		t.Errorf("the format description was not read: %+v %+v", state, scan)
	}
	if len(scan.Transactions) != 4 || scan.Complete != int64(last) {
		t.Fatalf("scan found %+v, complete at %d; want 4 transactions, complete at %d", scan.Transactions, scan.Complete, last)
	}
	for i, end := range []int{first, ddl, nonTransactional, last} {
		if tx := scan.Transactions[i]; tx.GTID.Seq != uint64(i+1) || tx.End != int64(end) || tx.Time != 1001+uint32(i) {
			t.Errorf("transaction %d = %+v, want sequence %d ending at %d at %d", i, tx, i+1, end, 1001+i)
		}
	}

	// Cut anywhere inside the last transaction: the scan stops after the third.
	for cut := nonTransactional + 1; cut < last; cut += 7 {
		scan, _, err := ScanFile(b.data[:cut], 0, ScanState{})
		if err != nil {
			t.Fatal(err)
		}
		if scan.Complete != int64(nonTransactional) || len(scan.Transactions) != 3 {
			t.Fatalf("cut at %d: complete at %d with %d transactions, want %d with 3", cut, scan.Complete, len(scan.Transactions), nonTransactional)
		}
	}

	// A scan from where the last one stopped reads the rest with the state it returned.
	rest, _, err := ScanFile(b.data[nonTransactional:], int64(nonTransactional), state)
	if err != nil || len(rest.Transactions) != 1 || rest.Transactions[0].GTID.Seq != 4 || rest.Complete != int64(last) {
		t.Fatalf("scan of the rest: %+v, %v", rest, err)
	}
	if scan, _, _ := ScanFile(b.data[:opening], 0, ScanState{}); scan.Complete != int64(opening) {
		t.Errorf("a file of only its opening events is complete at %d, want %d", scan.Complete, opening)
	}
}

func TestStartPosition(t *testing.T) {
	b := newFile()
	position, err := StartPosition(b.data)
	if err != nil || len(position) != 0 {
		t.Fatalf("StartPosition of an empty list = %v, %v", position, err)
	}
	if _, err := StartPosition([]byte("not a binlog")); err == nil {
		t.Error("StartPosition read a file that is not a binary log")
	}
}
