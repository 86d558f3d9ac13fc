// Package testca is a certificate authority made for one test: nothing outside the test trusts
// it. It issues the server and client certificates of the TLS tests, as files and as a
// tls.Certificate.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
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

// CA is a throwaway certificate authority.
type CA struct {
	Cert *x509.Certificate
	File string // the CA certificate, PEM, as server.ca_file reads it
	key  *ecdsa.PrivateKey
	dir  string
}

// New makes a CA named name whose files live in a directory of the test's.
func New(t testing.TB, name string) *CA {
	t.Helper()
	ca := &CA{dir: t.TempDir()}
	var der []byte
	ca.key, der = sign(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}, nil, nil)
	var err error
	if ca.Cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	ca.File = ca.writePEM(t, "ca.pem", "CERTIFICATE", der)
	return ca
}

// Issue signs a leaf certificate named cn for usage, valid for hosts (IP addresses or DNS
// names). It returns the certificate for a tls.Config and the paths of its PEM certificate and
// key.
func (ca *CA) Issue(t testing.TB, cn string, usage x509.ExtKeyUsage, hosts ...string) (cert tls.Certificate, certFile, keyFile string) {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	key, der := sign(t, tmpl, ca.Cert, ca.key)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = ca.writePEM(t, cn+"-cert.pem", "CERTIFICATE", der)
	keyFile = ca.writePEM(t, cn+"-key.pem", "PRIVATE KEY", keyDER)
	if cert, err = tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return cert, certFile, keyFile
}

// sign fills in a random serial number and a validity of an hour either side of now, makes a
// P-256 key, and signs tmpl with parent and parentKey (self-signed when parent is nil).
func sign(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62)); err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

func (ca *CA) writePEM(t testing.TB, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
