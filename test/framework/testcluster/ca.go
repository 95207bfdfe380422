package testcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority of a test, which issues server certificates for 127.0.0.1.
type CA struct {
	// Pool trusts the authority alone.
	Pool   *x509.CertPool
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	serial int64
}

// ServerFiles are the files Issue writes, named as in a kubernetes.io/tls Secret that cert-manager
// fills.
type ServerFiles struct {
	CAFile, CertFile, KeyFile string
	// Serial is the certificate's serial number, distinct for every certificate of the authority.
	Serial *big.Int
}

// NewCA makes an authority valid for an hour.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "appkeeper test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{Pool: x509.NewCertPool(), cert: cert, key: key, serial: 1}
	ca.Pool.AddCert(cert)
	return ca
}

// Issue writes into dir ca.crt, and tls.crt and tls.key of a new server certificate for 127.0.0.1
// and dnsNames. Each file is replaced by a rename, as the kubelet updates a mounted Secret, so that
// a reader never sees half of one.
func (ca *CA) Issue(t testing.TB, dir string, dnsNames ...string) ServerFiles {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca.serial++
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: dnsNames,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	files := ServerFiles{CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "tls.crt"),
		KeyFile: filepath.Join(dir, "tls.key"), Serial: leaf.SerialNumber}
	for _, f := range []struct {
		path  string
		block *pem.Block
	}{
		{files.CAFile, &pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}},
		{files.KeyFile, &pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}},
		{files.CertFile, &pem.Block{Type: "CERTIFICATE", Bytes: leafDER}},
	} {
		if err := os.WriteFile(f.path+".new", pem.EncodeToMemory(f.block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(f.path+".new", f.path); err != nil {
			t.Fatal(err)
		}
	}
	return files
}
