package backup

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// nonASCII is text whose bytes a wrong character set anywhere on the way would change.
const nonASCII = "Grüße — 日本語 ✓"

// blobSize is large enough to span several of mysqldump's extended inserts and many gzip blocks.
const blobSize = 3 << 20

// seed fills two databases with what a dump must carry over unchanged: NULLs next to empty
// strings, non-ASCII text in utf8mb4 and latin1, a multi-megabyte BLOB, a table without a
// primary key holding duplicate rows, an empty table, and a view, a trigger and a routine, which
// are not tables and must not be checksummed. It returns the BLOB.
func seed(t *testing.T, m *mariadb) []byte {
	t.Helper()
	m.exec(t,
		"CREATE DATABASE shop CHARACTER SET utf8mb4",
		`CREATE TABLE shop.customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(100) NOT NULL,
			note TEXT NULL, balance DECIMAL(12,2) NOT NULL, born DATE NULL, seen TIMESTAMP NULL, score DOUBLE NULL)`,
		`INSERT INTO shop.customers (name, note, balance, born, seen, score) VALUES
			('`+nonASCII+`', NULL, 10.50, '1980-02-29', '2026-01-01 12:00:00', 0.1),
			('Ann', '', 0, NULL, NULL, NULL),
			('Bob', 'tab	and ''quote'' and \\ backslash', -3.25, '2000-01-01', '2026-06-30 23:59:59', 1e300)`,
		`CREATE TABLE shop.orders (id INT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2),
			status ENUM('new','paid','shipped') NOT NULL, flags BIT(8), doc JSON NULL)`,
		`INSERT INTO shop.orders VALUES (1, 1, 99.99, 'paid', b'10100101', '{"a": [1, 2]}'),
			(2, 1, NULL, 'new', NULL, NULL), (3, 3, 5, 'shipped', b'0', '{}')`,
		"CREATE TABLE shop.empty_table (id INT PRIMARY KEY)",
		"CREATE TABLE shop.legacy (id INT PRIMARY KEY, name VARCHAR(50)) CHARACTER SET latin1",
		"INSERT INTO shop.legacy VALUES (1, 'Grüße'), (2, NULL)",
		"CREATE VIEW shop.paid_orders AS SELECT id, total FROM shop.orders WHERE status = 'paid'",
		"CREATE TRIGGER shop.orders_total BEFORE INSERT ON shop.orders FOR EACH ROW SET NEW.total = COALESCE(NEW.total, 0)",
		"CREATE PROCEDURE shop.order_count(OUT n INT) SELECT COUNT(*) INTO n FROM shop.orders",
		"CREATE DATABASE media CHARACTER SET utf8mb4",
		"CREATE TABLE media.files (id INT PRIMARY KEY, name VARCHAR(200) NOT NULL, data LONGBLOB NULL)",
		"CREATE TABLE media.tags (tag VARCHAR(20), n INT)",
		"INSERT INTO media.tags VALUES ('a', 1), ('a', 1), ('b', NULL), (NULL, NULL)",
	)
	blob := make([]byte, blobSize)
	_, _ = rand.Read(blob)
	for _, row := range []struct {
		id   int
		name string
		data []byte
	}{{1, "big.bin", blob}, {2, "empty.bin", []byte{}}, {3, "missing.bin", nil}, {4, nonASCII, []byte{0, 0x1f, 0xff}}} {
		if _, err := m.root.Exec("INSERT INTO media.files VALUES (?, ?, ?)", row.id, row.name, row.data); err != nil {
			t.Fatal(err)
		}
	}
	return blob
}

// seededTables are the tables seed makes, as a manifest lists them.
var seededTables = []string{
	"media.files", "media.tags", "shop.customers", "shop.empty_table", "shop.legacy", "shop.orders",
}

func manifestTables(m *manifest) []string {
	var names []string
	for _, table := range m.Tables {
		names = append(names, table.name())
	}
	return names
}

// requireSeedRestored checks, beyond checksums, what a person would look at after a restore.
func requireSeedRestored(t *testing.T, m *mariadb, blob []byte) {
	t.Helper()
	var name string
	var data []byte
	if err := m.root.QueryRow("SELECT name FROM shop.customers WHERE id = 1").Scan(&name); err != nil || name != nonASCII {
		t.Errorf("customer 1 is %q (%v), want %q", name, err, nonASCII)
	}
	if err := m.root.QueryRow("SELECT data FROM media.files WHERE id = 1").Scan(&data); err != nil || !bytes.Equal(data, blob) {
		t.Errorf("the BLOB came back with %d bytes (%v), want the %d written", len(data), err, len(blob))
	}
	var isNull bool
	if err := m.root.QueryRow("SELECT data IS NULL FROM media.files WHERE id = 3").Scan(&isNull); err != nil || !isNull {
		t.Errorf("a NULL BLOB came back not NULL (%v)", err)
	}
	var routines int
	if err := m.root.QueryRow("SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'shop'").Scan(&routines); err != nil || routines != 1 {
		t.Errorf("the routine was not restored: %d routines (%v)", routines, err)
	}
	var views int
	if err := m.root.QueryRow("SELECT COUNT(*) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'shop'").Scan(&views); err != nil || views != 1 {
		t.Errorf("the view was not restored: %d views (%v)", views, err)
	}
}

// sourceChecksums reads the tables' checksums on m directly, as root.
func sourceChecksums(t *testing.T, m *mariadb, databases ...string) []tableChecksum {
	t.Helper()
	tables, err := listTables(context.Background(), m.root, databases)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := checksumTables(context.Background(), m.root, tables)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// requireNoFiles fails when dir holds any file, such as a temporary one left behind.
func requireNoFiles(t *testing.T, dir string) {
	t.Helper()
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) > 0 {
		t.Errorf("files were left in %s: %v", dir, files)
	}
}

// flipByte corrupts one byte in the middle of a stored file.
func flipByte(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// truncate cuts the last byte of a stored file.
func truncate(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, info.Size()-1); err != nil {
		t.Fatal(err)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
