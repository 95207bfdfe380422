package backup

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// tableChecksum is what a backup records of a table, and what verify compares.
type tableChecksum struct {
	Database string `json:"database"`
	Table    string `json:"table"`
	Rows     int64  `json:"rows"`
	// Checksum is 32 hex digits: the XOR and the sum (modulo 2^64) over the rows of 64 bits of
	// each row's MD5. XOR alone cannot tell a duplicated row from none; the sum can.
	Checksum string `json:"checksum"`
}

// name is "database.table".
func (t tableChecksum) name() string { return t.Database + "." + t.Table }

// querier is a pool, or the one connection that holds a dump's snapshot.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// table is a table with its columns in ordinal order.
type table struct {
	database, name string
	columns        []string
}

// checksummedTableTypes are the tables whose rows a dump holds: views hold none, and a MariaDB
// sequence's state is not a row set that survives a reload unchanged.
const checksummedTableTypes = "'BASE TABLE', 'SYSTEM VERSIONED'"

// listTables returns the tables of databases with their columns, sorted by database and name.
func listTables(ctx context.Context, q querier, databases []string) ([]table, error) {
	if len(databases) == 0 {
		return nil, nil
	}
	placeholders := strings.TrimSuffix(strings.Repeat("?, ", len(databases)), ", ")
	args := make([]any, len(databases))
	for i, db := range databases {
		args[i] = db
	}
	rows, err := q.QueryContext(ctx, `SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME
		FROM information_schema.COLUMNS c
		JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
		WHERE t.TABLE_TYPE IN (`+checksummedTableTypes+`) AND c.TABLE_SCHEMA IN (`+placeholders+`)
		ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION`, args...)
	if err != nil {
		return nil, fmt.Errorf("cannot list the tables: %w", err)
	}
	defer rows.Close()
	var tables []table
	for rows.Next() {
		var db, name, column string
		if err := rows.Scan(&db, &name, &column); err != nil {
			return nil, err
		}
		if n := len(tables); n == 0 || tables[n-1].database != db || tables[n-1].name != name {
			tables = append(tables, table{database: db, name: name})
		}
		last := &tables[len(tables)-1]
		last.columns = append(last.columns, column)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cannot list the tables: %w", err)
	}
	// The server's collation orders names; the manifest's order must not depend on it.
	sort.Slice(tables, func(i, j int) bool {
		if tables[i].database != tables[j].database {
			return tables[i].database < tables[j].database
		}
		return tables[i].name < tables[j].name
	})
	return tables, nil
}

// checksumQuery reads a table's row count and checksum in one scan. Each row is the MD5 of its
// columns as bytes (CAST AS BINARY: a string's bytes in its own character set, a BLOB's as they
// are, a number's or date's text), separated by 0x1f and followed by a NULL marker per column,
// since CONCAT_WS skips NULLs and NULL must differ from an empty string. The MD5 is computed
// twice rather than in a derived table, which a server may materialise on disk for a large
// table.
func checksumQuery(t table) string {
	values := make([]string, 0, len(t.columns)+1)
	nulls := make([]string, 0, len(t.columns))
	for _, column := range t.columns {
		c := quoteIdent(column)
		values = append(values, "CAST("+c+" AS BINARY)")
		nulls = append(nulls, "ISNULL("+c+")")
	}
	values = append(values, "CONCAT("+strings.Join(nulls, ", ")+")")
	row := "MD5(CONCAT_WS(0x1f, " + strings.Join(values, ", ") + "))"
	return "SELECT COUNT(*)" +
		", CAST(COALESCE(BIT_XOR(CAST(CONV(SUBSTRING(" + row + ", 1, 16), 16, 10) AS UNSIGNED)), 0) AS CHAR)" +
		", CAST(COALESCE(SUM(CAST(CONV(SUBSTRING(" + row + ", 17, 16), 16, 10) AS UNSIGNED)), 0) AS CHAR)" +
		" FROM " + quoteIdent(t.database) + "." + quoteIdent(t.name)
}

// checksumTable reads a table's row count and checksum.
func checksumTable(ctx context.Context, q querier, t table) (tableChecksum, error) {
	rows, err := q.QueryContext(ctx, checksumQuery(t))
	if err != nil {
		return tableChecksum{}, fmt.Errorf("cannot checksum %s.%s: %w", t.database, t.name, err)
	}
	defer rows.Close()
	var count int64
	var xor, sum string
	if rows.Next() {
		if err := rows.Scan(&count, &xor, &sum); err != nil {
			return tableChecksum{}, fmt.Errorf("cannot checksum %s.%s: %w", t.database, t.name, err)
		}
	}
	if err := rows.Err(); err != nil {
		return tableChecksum{}, fmt.Errorf("cannot checksum %s.%s: %w", t.database, t.name, err)
	}
	checksum, err := formatChecksum(xor, sum)
	if err != nil {
		return tableChecksum{}, fmt.Errorf("cannot checksum %s.%s: %w", t.database, t.name, err)
	}
	return tableChecksum{Database: t.database, Table: t.name, Rows: count, Checksum: checksum}, nil
}

// formatChecksum writes the XOR and the sum, both decimal from the server, as 16 hex digits
// each; the sum is a DECIMAL that may exceed 64 bits and is reduced modulo 2^64.
func formatChecksum(xor, sum string) (string, error) {
	x, ok := new(big.Int).SetString(xor, 10)
	if !ok {
		return "", fmt.Errorf("the server returned %q as an XOR", xor)
	}
	s, ok := new(big.Int).SetString(sum, 10)
	if !ok {
		return "", fmt.Errorf("the server returned %q as a sum", sum)
	}
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
	x.And(x, mask)
	s.And(s, mask)
	return fmt.Sprintf("%016x%016x", x, s), nil
}

// checksumTables checksums every table, in order.
func checksumTables(ctx context.Context, q querier, tables []table) ([]tableChecksum, error) {
	sums := make([]tableChecksum, 0, len(tables))
	for _, t := range tables {
		sum, err := checksumTable(ctx, q, t)
		if err != nil {
			return nil, err
		}
		sums = append(sums, sum)
	}
	return sums, nil
}
