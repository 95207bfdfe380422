package backup

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

func TestValidateKey(t *testing.T) {
	for _, key := range []string{"prod/shop/db/db-20261123-0200", "a", "ns/mysql/backup.v1"} {
		if err := validateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v", key, err)
		}
	}
	for _, key := range []string{"", "/abs/key", "a/../b", "..", "../x", "a/..", "a//b", "a/./b", "a/", "a\x00b"} {
		if err := validateKey(key); err == nil {
			t.Errorf("ValidateKey(%q) accepted it", key)
		}
	}
}

// TestTargetArgsParse holds the contract: the flags the operator builds with Target.Args are the
// ones the subcommands parse back to the same target.
func TestTargetArgsParse(t *testing.T) {
	for _, want := range []Target{
		{S3Endpoint: "https://s3.example:9000", S3Bucket: "b", S3Region: "eu-west-1", S3PathStyle: true,
			S3CAFile: "/etc/ca/ca.crt", Key: "prod/ns/db/b1"},
		{Volume: "/backups", Key: "ns/db/b1", S3Region: "us-east-1"},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		var got Target
		bindTarget(fs, &got)
		if err := fs.Parse(want.Args()); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("parsed %+v from %q, want %+v", got, want.Args(), want)
		}
	}
}

func TestFitResult(t *testing.T) {
	yes := false
	res := Result{Key: "k", Verified: &yes, Error: strings.Repeat("é", 3000)}
	for i := range 200 {
		res.Pruned = append(res.Pruned, fmt.Sprintf("prod/namespace/mysql/backup-%03d", i))
		res.Mismatches = append(res.Mismatches, fmt.Sprintf("db.table_%03d: rows 1 != 2", i))
	}
	data := fitResult(res)
	if len(data) > maxTerminationMessage {
		t.Fatalf("%d bytes do not fit a termination message", len(data))
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("the fitted result is not JSON: %v", err)
	}
	if back.Key != "k" || back.Verified == nil || *back.Verified || back.Error == "" {
		t.Errorf("fitting lost what matters: %+v", back)
	}
	small := Result{Key: "k", Pruned: []string{"a"}}
	if data := fitResult(small); string(data) != `{"key":"k","pruned":["a"]}` {
		t.Errorf("a small result was changed: %s", data)
	}
}

func TestFormatChecksum(t *testing.T) {
	for _, tt := range []struct{ xor, sum, want string }{
		{"0", "0", "00000000000000000000000000000000"},
		{"18446744073709551615", "18446744073709551616", "ffffffffffffffff0000000000000000"},
		{"1", "36893488147419103234", "00000000000000010000000000000002"},
	} {
		got, err := formatChecksum(tt.xor, tt.sum)
		if err != nil || got != tt.want {
			t.Errorf("formatChecksum(%s, %s) = %s, %v; want %s", tt.xor, tt.sum, got, err, tt.want)
		}
	}
	if _, err := formatChecksum("x", "0"); err == nil {
		t.Error("formatChecksum accepted a non-number")
	}
}

func TestChecksumQueryQuotesNames(t *testing.T) {
	q := checksumQuery(table{database: "we`ird", name: "t", columns: []string{"a`b", "c"}})
	for _, want := range []string{"FROM `we``ird`.`t`", "CAST(`a``b` AS BINARY)", "ISNULL(`c`)"} {
		if !strings.Contains(q, want) {
			t.Errorf("%s lacks %s", q, want)
		}
	}
}

func TestTailBufferKeepsTheLastLine(t *testing.T) {
	b := &tailBuffer{max: 64}
	for range 100 {
		fmt.Fprintln(b, "Warning: a warning that repeats")
	}
	fmt.Fprintln(b, "mysqldump: Got error: 1045")
	if got := b.lastLine(); got != "mysqldump: Got error: 1045" {
		t.Errorf("lastLine = %q", got)
	}
	if len(b.buf) > 64 {
		t.Errorf("the buffer grew to %d bytes", len(b.buf))
	}
	if got := (&tailBuffer{max: 8}).lastLine(); got != "it wrote no error" {
		t.Errorf("lastLine of nothing = %q", got)
	}
}

func TestBoundMismatches(t *testing.T) {
	var many []string
	for i := range 25 {
		many = append(many, fmt.Sprint(i))
	}
	got := boundMismatches(many)
	if len(got) != maxMismatches || got[len(got)-1] != "and 6 more" {
		t.Errorf("boundMismatches = %q", got)
	}
	if got := boundMismatches(many[:3]); len(got) != 3 {
		t.Errorf("boundMismatches of 3 = %q", got)
	}
}

func TestDescribeFileError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "write", Path: "/b/x", Err: syscall.ENOSPC}, "the volume is full"},
		{&fs.PathError{Op: "open", Path: "/b/x", Err: syscall.EROFS}, "read-only"},
		{&fs.PathError{Op: "open", Path: "/b/x", Err: syscall.EACCES}, "permission denied"},
	} {
		got := describeFileError(tt.err)
		if !strings.Contains(got.Error(), tt.want) || !errors.Is(got, tt.err) {
			t.Errorf("describeFileError(%v) = %v, want %q", tt.err, got, tt.want)
		}
	}
}

func TestDescribeReadError(t *testing.T) {
	denied := &fs.PathError{Op: "open", Path: "/wp-content/x", Err: syscall.EACCES}
	if got := describeReadError(denied); !strings.Contains(got.Error(), "cannot read it") || !errors.Is(got, denied) {
		t.Errorf("describeReadError(%v) = %v", denied, got)
	}
	broken := &fs.PathError{Op: "read", Path: "/wp-content/x", Err: syscall.EIO}
	if got := describeReadError(broken); !errors.Is(got, broken) {
		t.Errorf("describeReadError(%v) = %v", broken, got)
	}
}
