package backup

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

// TestS3OverHTTPS: an https store whose authority the system does not know is refused with a
// sentence naming --s3-ca-file, and used once that file gives the authority.
func TestS3OverHTTPS(t *testing.T) {
	authority := testcluster.NewCA(t)
	server := authority.Issue(t, t.TempDir())
	s3 := startVersityGW(t, &testcluster.ObjectStoreTLS{CertFile: server.CertFile, KeyFile: server.KeyFile, Pool: authority.Pool})
	ctx := context.Background()
	target := s3.target("tls/object")

	store, err := openStorage(target, s3.credentials())
	if err != nil {
		t.Fatal(err)
	}
	err = store.check(ctx)
	if err == nil || !strings.Contains(err.Error(), "is not trusted; give its authority with --"+flagS3CAFile) {
		t.Fatalf("check without the authority = %v, want an error naming --%s", err, flagS3CAFile)
	}
	t.Log(err)

	target.S3CAFile = server.CAFile
	if store, err = openStorage(target, s3.credentials()); err != nil {
		t.Fatal(err)
	}
	if err := store.check(ctx); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("appkeeper "), 1000)
	if err := store.put(ctx, target.Key, bytes.NewReader(data), -1); err != nil {
		t.Fatal(err)
	}
	r, err := store.get(ctx, target.Key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, data) {
		t.Errorf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
	}

	target.S3CAFile = s3.dir // a folder, not PEM
	if _, err := openStorage(target, s3.credentials()); err == nil {
		t.Error("a --s3-ca-file that is not PEM was accepted")
	}
}
