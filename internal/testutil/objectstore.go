package testutil

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// VersityGW is the S3-compatible store the tests write backups to: versitygw over a folder, which
// `make test-deps` builds into bin/.
const VersityGW = "bin/versitygw-v1.8.0/versitygw"

// ObjectStore is a running versitygw with one bucket.
type ObjectStore struct {
	// Endpoint is the URL clients reach it at.
	Endpoint, Bucket, Region string
	AccessKey, SecretKey     string
	// Dir holds the bucket's objects as files: Dir/Bucket/key.
	Dir    string
	Client *minio.Client
}

// ObjectStoreTLS serves the store over https with a certificate, which clients check against pool.
type ObjectStoreTLS struct {
	CertFile, KeyFile string
	Pool              *x509.CertPool
}

// StartObjectStore starts versitygw listening on host (127.0.0.1, or an address pods reach), over
// https when tlsFiles is given, creates the bucket "backups", and stops it when the test ends. It
// skips the test when versitygw is not built, unless APPKEEPER_REQUIRE_MARIADB says the machine
// must have every test server (as `make test` does).
func StartObjectStore(t testing.TB, host string, tlsFiles *ObjectStoreTLS) *ObjectStore {
	t.Helper()
	binary := filepath.Join(repoRoot(), VersityGW)
	if _, err := os.Stat(binary); err != nil {
		if os.Getenv("APPKEEPER_REQUIRE_MARIADB") != "" {
			t.Fatalf("%s is not built: run `make test-deps`", binary)
		}
		t.Skipf("%s is not built; `make test-deps` builds it", binary)
	}
	s := &ObjectStore{Bucket: "backups", Region: "us-east-1", AccessKey: "appkeeper-test", SecretKey: "appkeeper-test-secret", Dir: t.TempDir()}
	address := net.JoinHostPort(host, fmt.Sprint(freePortOn(t, host)))
	args := []string{"--access", s.AccessKey, "--secret", s.SecretKey, "--port", address, "--quiet"}
	scheme, transport := "http", http.DefaultTransport
	if tlsFiles != nil {
		args = append(args, "--cert", tlsFiles.CertFile, "--key", tlsFiles.KeyFile)
		scheme = "https"
		transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tlsFiles.Pool, MinVersion: tls.VersionTLS12}}
	}
	gw := exec.Command(binary, append(args, "posix", s.Dir)...)
	var log strings.Builder
	gw.Stdout, gw.Stderr = &log, &log
	if err := gw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gw.Process.Kill()
		_ = gw.Wait()
	})
	s.Endpoint = scheme + "://" + address
	client, err := minio.New(address, &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath,
		Region: s.Region, Secure: tlsFiles != nil, Transport: transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Client = client
	Eventually(t, 30*time.Second, func(ctx context.Context) error {
		if err := client.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{Region: s.Region}); err != nil {
			return fmt.Errorf("versitygw did not create the bucket: %w\n%s", err, log.String())
		}
		return nil
	})
	return s
}

// Objects lists the keys of every object of the bucket.
func (s *ObjectStore) Objects(t testing.TB) []string {
	t.Helper()
	var keys []string
	for object := range s.Client.ListObjects(context.Background(), s.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		if object.Err != nil {
			t.Fatal(object.Err)
		}
		keys = append(keys, object.Key)
	}
	return keys
}

func freePortOn(t testing.TB, host string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// repoRoot is the repository's root, two folders above this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
