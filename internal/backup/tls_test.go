package backup

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority and a certificate it signed for 127.0.0.1, as files.
type testCA struct {
	caFile, certFile, keyFile string
	pool                      *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "appkeeper test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{caFile: filepath.Join(dir, "ca.crt"), certFile: filepath.Join(dir, "tls.crt"),
		keyFile: filepath.Join(dir, "tls.key"), pool: x509.NewCertPool()}
	ca.pool.AddCert(caCert)
	for file, block := range map[string]*pem.Block{
		ca.caFile:   {Type: "CERTIFICATE", Bytes: caDER},
		ca.certFile: {Type: "CERTIFICATE", Bytes: leafDER},
		ca.keyFile:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca
}

// TestS3OverHTTPS: an https store whose authority the system does not know is refused with a
// sentence naming --s3-ca-file, and used once that file gives the authority.
func TestS3OverHTTPS(t *testing.T) {
	ca := newTestCA(t)
	s3 := startVersityGW(t, ca)
	ctx := context.Background()
	target := s3.target("tls/object")

	store, err := OpenStorage(target, s3.credentials())
	if err != nil {
		t.Fatal(err)
	}
	err = store.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "is not trusted; give its authority with --"+FlagS3CAFile) {
		t.Fatalf("check without the authority = %v, want an error naming --%s", err, FlagS3CAFile)
	}
	t.Log(err)

	target.S3CAFile = ca.caFile
	if store, err = OpenStorage(target, s3.credentials()); err != nil {
		t.Fatal(err)
	}
	if err := store.Check(ctx); err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("appkeeper "), 1000)
	if err := store.Put(ctx, target.Key, bytes.NewReader(data), -1); err != nil {
		t.Fatal(err)
	}
	r, err := store.Get(ctx, target.Key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, data) {
		t.Errorf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
	}

	target.S3CAFile = s3.dir // a folder, not PEM
	if _, err := OpenStorage(target, s3.credentials()); err == nil {
		t.Error("a --s3-ca-file that is not PEM was accepted")
	}
}
