package testservers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"k8s.io/apimachinery/pkg/util/wait"
)

// VersityGW is versitygw as `make test-deps` builds it, relative to the repository's root.
const VersityGW = "bin/versitygw-v1.8.0/versitygw"

// ObjectStoreOptions say how versitygw starts.
type ObjectStoreOptions struct {
	// Binary is versitygw.
	Binary string
	// Host is the address it listens on: 127.0.0.1, or an address pods reach.
	Host string
	// Dir holds the bucket's objects as files: Dir/<bucket>/<key>.
	Dir string
	// TLS serves https with a certificate; nil serves http.
	TLS *ObjectStoreTLS
}

// ObjectStoreTLS serves the store over https with a certificate, which clients check against pool.
type ObjectStoreTLS struct {
	CertFile, KeyFile string
	Pool              *x509.CertPool
}

// ObjectStore is a running versitygw with one bucket.
type ObjectStore struct {
	// Endpoint is the URL clients reach it at.
	Endpoint, Bucket, Region string
	AccessKey, SecretKey     string
	// Dir holds the bucket's objects as files: Dir/Bucket/key.
	Dir    string
	Client *minio.Client
	cmd    *exec.Cmd
	log    *Output
}

// StartObjectStore starts versitygw and creates the bucket "backups".
func StartObjectStore(ctx context.Context, o ObjectStoreOptions) (_ *ObjectStore, err error) {
	s := &ObjectStore{Bucket: "backups", Region: "us-east-1", AccessKey: "appkeeper-test", SecretKey: "appkeeper-test-secret",
		Dir: o.Dir, log: &Output{}}
	port, err := FreePort(o.Host)
	if err != nil {
		return nil, err
	}
	address := net.JoinHostPort(o.Host, fmt.Sprint(port))
	args := []string{"--access", s.AccessKey, "--secret", s.SecretKey, "--port", address, "--quiet"}
	scheme, transport := "http", http.DefaultTransport
	if o.TLS != nil {
		args = append(args, "--cert", o.TLS.CertFile, "--key", o.TLS.KeyFile)
		scheme = "https"
		transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.TLS.Pool, MinVersion: tls.VersionTLS12}}
	}
	s.cmd = exec.Command(o.Binary, append(args, "posix", s.Dir)...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	s.Endpoint = scheme + "://" + address
	s.Client, err = minio.New(address, &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath,
		Region: s.Region, Secure: o.TLS != nil, Transport: transport,
	})
	if err != nil {
		return nil, err
	}
	return s, s.makeBucket(ctx, 30*time.Second)
}

// makeBucket creates the bucket once versitygw answers, within timeout.
func (s *ObjectStore) makeBucket(ctx context.Context, timeout time.Duration) error {
	var err error
	if wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err = s.Client.MakeBucket(attempt, s.Bucket, minio.MakeBucketOptions{Region: s.Region})
		// An attempt cut short may have created it.
		return err == nil || minio.ToErrorResponse(err).Code == "BucketAlreadyOwnedByYou", nil
	}) != nil {
		return fmt.Errorf("versitygw did not create the bucket: %w\n%s", err, s.log.String())
	}
	return nil
}

// Pid is versitygw's process id.
func (s *ObjectStore) Pid() int { return s.cmd.Process.Pid }

// Stop kills versitygw and waits for it.
func (s *ObjectStore) Stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// FreePort is a TCP port on host that nothing listens on at the moment.
func FreePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Output collects a process's output, which its pipes write from other goroutines while a test
// reads it.
type Output struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *Output) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *Output) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
