package testcluster

import (
	"context"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/appkeeper/appkeeper/test/framework/testservers"
)

// VersityGW is the S3-compatible store the tests write backups to: versitygw over a folder, which
// `make test-deps` builds into bin/.
const VersityGW = testservers.VersityGW

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
type ObjectStoreTLS = testservers.ObjectStoreTLS

// StartObjectStore starts versitygw listening on host (127.0.0.1, or an address pods reach), over
// https when tlsFiles is given, creates the bucket "backups", and stops it when the test ends. It
// skips the test when versitygw is not built, unless APPKEEPER_REQUIRE_MARIADB says the machine
// must have every test server (as `make test` does).
func StartObjectStore(t testing.TB, host string, tlsFiles *ObjectStoreTLS) *ObjectStore {
	t.Helper()
	binary := RequireBuilt(t, VersityGW, "test-deps", false)
	s, err := testservers.StartObjectStore(context.Background(), testservers.ObjectStoreOptions{
		Binary: binary, Host: host, Dir: t.TempDir(), TLS: tlsFiles,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return &ObjectStore{Endpoint: s.Endpoint, Bucket: s.Bucket, Region: s.Region, AccessKey: s.AccessKey,
		SecretKey: s.SecretKey, Dir: s.Dir, Client: s.Client}
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
