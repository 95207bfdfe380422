package backup

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3PartSize bounds the memory of an upload: a stream of unknown length is sent in parts of
// this size, each buffered once. It also bounds an artifact to 10,000 parts, about 156 GiB
// compressed, far beyond what a logical dump is fit for.
const s3PartSize = 16 << 20

// s3MaxRetries keeps the retries of a request that failed on the network or with a 5xx short
// enough that an unreachable store fails a dump within seconds, while still riding out a blip.
const s3MaxRetries = 5

// s3Storage keeps objects in a bucket of an S3-compatible store.
type s3Storage struct {
	client   *minio.Client
	endpoint string
	bucket   string
}

func newS3Storage(t Target, creds Credentials) (*s3Storage, error) {
	if t.S3Bucket == "" {
		return nil, fmt.Errorf("--%s is required with --%s", flagS3Bucket, flagS3Endpoint)
	}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return nil, fmt.Errorf("the S3 credentials are missing: set %s and %s", EnvAccessKeyID, EnvSecretAccessKey)
	}
	u, err := url.Parse(t.S3Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--%s %q is not an http:// or https:// URL", flagS3Endpoint, t.S3Endpoint)
	}
	if u.User != nil {
		return nil, fmt.Errorf("--%s must not hold credentials; set %s and %s", flagS3Endpoint, EnvAccessKeyID, EnvSecretAccessKey)
	}
	if u.Path != "" && u.Path != "/" {
		return nil, fmt.Errorf("--%s %q has a path; give the store's root URL", flagS3Endpoint, t.S3Endpoint)
	}
	secure := u.Scheme == "https"
	transport, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, err
	}
	if t.S3CAFile != "" {
		pool, err := caPool(t.S3CAFile)
		if err != nil {
			return nil, err
		}
		if transport.TLSClientConfig == nil {
			transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	lookup := minio.BucketLookupAuto
	if t.S3PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, ""),
		Secure:       secure,
		Transport:    transport,
		Region:       t.S3Region,
		BucketLookup: lookup,
		MaxRetries:   s3MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("--%s %q: %w", flagS3Endpoint, t.S3Endpoint, err)
	}
	return &s3Storage{client: client, endpoint: t.S3Endpoint, bucket: t.S3Bucket}, nil
}

// caPool is the system's pool plus the certificates of file: an extra authority must not make
// the store's public certificates fail.
func caPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read --%s: %w", flagS3CAFile, err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--%s %s holds no PEM certificate", flagS3CAFile, file)
	}
	return pool, nil
}

// check asks for the bucket (HEAD), and when the answer is 404 or 403, reads an object to learn
// why: HEAD's answer has no body, so it cannot tell a missing bucket from an unknown access key
// (which some stores answer with 404), nor wrong credentials from a policy that grants objects
// but not the bucket. A GET's error names its cause.
func (s *s3Storage) check(ctx context.Context) error {
	exists, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil && minio.ToErrorResponse(err).Code != minio.AccessDenied {
		return s.describe(err)
	}
	if exists {
		return nil
	}
	r, err := s.open(ctx, ".appkeeper-check")
	if err == nil {
		_ = r.Close()
		return nil
	}
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return nil // the bucket exists after all
	}
	return s.describe(err)
}

// put sends an object of known size in one request, and a stream of unknown length as a
// multipart upload, which minio-go aborts when r or a part fails, so the store keeps nothing of
// it.
func (s *s3Storage) put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := validateKey(key); err != nil {
		return err
	}
	src := &recordingReader{r: r}
	_, err := s.client.PutObject(ctx, s.bucket, key, src, size, minio.PutObjectOptions{
		PartSize:    s3PartSize,
		ContentType: "application/octet-stream",
	})
	if err != nil {
		if src.err != nil && errors.Is(err, src.err) {
			return err // the stream's own error, such as a failed dump
		}
		return fmt.Errorf("cannot write %s: %w", key, s.describe(err))
	}
	return nil
}

func (s *s3Storage) get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := validateKey(key); err != nil {
		return nil, err
	}
	r, err := s.open(ctx, key)
	if err != nil {
		return nil, s.objectError(key, err)
	}
	return r, nil
}

// open starts reading the object at key. GetObject sends nothing until read: peeking makes the
// request, so that a missing object or a refused credential is told here. A GET, unlike stat's
// HEAD, has the error's code in its body.
func (s *s3Storage) open(ctx context.Context, key string) (io.ReadCloser, error) {
	object, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	buffered := bufio.NewReaderSize(object, 64<<10)
	if _, err := buffered.Peek(1); err != nil && !errors.Is(err, io.EOF) {
		_ = object.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{buffered, object}, nil
}

func (s *s3Storage) stat(ctx context.Context, key string) (int64, error) {
	if err := validateKey(key); err != nil {
		return 0, err
	}
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return 0, s.objectError(key, err)
	}
	return info.Size, nil
}

func (s *s3Storage) delete(ctx context.Context, key string) error {
	if err := validateKey(key); err != nil {
		return err
	}
	err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		return fmt.Errorf("cannot delete %s: %w", key, s.describe(err))
	}
	return nil
}

func (s *s3Storage) objectError(key string, err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return fmt.Errorf("%s: %w", key, errNotFound)
	}
	return fmt.Errorf("cannot read %s: %w", key, s.describe(err))
}

// describe turns an error of the store into a sentence that names what to fix; it never holds
// the credentials. XAdminUserNotFound is versitygw's answer to an unknown access key.
func (s *s3Storage) describe(err error) error {
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var netErr net.Error
	switch code := minio.ToErrorResponse(err).Code; {
	case code == minio.NoSuchBucket:
		return fmt.Errorf("the bucket %q does not exist at %s", s.bucket, s.endpoint)
	case code == minio.AccessDenied || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" ||
		code == "InvalidToken" || code == "ExpiredToken" || code == "XAdminUserNotFound":
		return fmt.Errorf("the object store at %s refused the credentials of %s for bucket %q (%s): check %s and %s",
			s.endpoint, EnvAccessKeyID, s.bucket, code, EnvAccessKeyID, EnvSecretAccessKey)
	case errors.As(err, &certErr) || errors.As(err, &unknownCA):
		return fmt.Errorf("the certificate of the object store at %s is not trusted; give its authority with --%s: %w",
			s.endpoint, flagS3CAFile, err)
	case errors.As(err, &netErr):
		return fmt.Errorf("cannot reach the object store at %s: %w", s.endpoint, err)
	case code != "":
		return fmt.Errorf("the object store at %s answered %s: %w", s.endpoint, code, err)
	}
	return err
}

// recordingReader keeps its reader's error, to tell a failed stream from a failed store.
type recordingReader struct {
	r   io.Reader
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return n, err
}

func (s *s3Storage) list(ctx context.Context, prefix string) ([]string, error) {
	if err := validateKey(prefix); err != nil {
		return nil, err
	}
	var keys []string
	for object := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix + "/", Recursive: true}) {
		if object.Err != nil {
			return nil, fmt.Errorf("cannot list %s: %w", prefix, s.describe(object.Err))
		}
		keys = append(keys, object.Key)
	}
	return keys, nil
}

func (s *s3Storage) listFolder(ctx context.Context, prefix string) ([]string, error) {
	if err := validateKey(prefix); err != nil {
		return nil, err
	}
	var keys []string
	for object := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix + "/"}) {
		if object.Err != nil {
			return nil, fmt.Errorf("cannot list %s: %w", prefix, s.describe(object.Err))
		}
		if !strings.HasSuffix(object.Key, "/") {
			keys = append(keys, object.Key)
		}
	}
	return keys, nil
}
