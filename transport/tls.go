package transport

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/devicectl/devicectl/internal/safefile"
)

// TLSOptions describes a client TLS setup in terms of files, the way a config
// file or flags name it. The zero value means the system roots and full
// verification.
type TLSOptions struct {
	// CAFile is a PEM file of CA certificates that replaces the system roots:
	// the server's chain must lead to one of them.
	CAFile string
	// CertFile and KeyFile are the PEM client certificate and its private key
	// for mutual TLS; both or neither.
	CertFile, KeyFile string
	// ServerName overrides the name checked against the server's
	// certificate (by default the URL's host).
	ServerName string
	// InsecureSkipVerify turns certificate verification off. For tests
	// only: Dial logs a warning every time it is used.
	InsecureSkipVerify bool
}

// maxPEMFile bounds a CA bundle, certificate or key file read; a system CA bundle is a few hundred
// KiB.
const maxPEMFile = 1 << 20

// Config builds the tls.Config for DialOptions.TLSConfig. Errors name the
// file and what is wrong with it. A nil *TLSOptions gives a default config.
func (o *TLSOptions) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o == nil {
		return cfg, nil
	}
	cfg.ServerName = o.ServerName
	cfg.InsecureSkipVerify = o.InsecureSkipVerify

	if o.CAFile != "" {
		pem, err := safefile.ReadFile(o.CAFile, maxPEMFile)
		if err != nil {
			return nil, fmt.Errorf("transport: CA file: %w", err) // names the file
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("transport: CA file %s: no PEM certificate in it", o.CAFile)
		}
		cfg.RootCAs = pool
	}

	switch {
	case o.CertFile == "" && o.KeyFile == "":
	case o.KeyFile == "":
		return nil, fmt.Errorf("transport: client certificate %s given without its key file", o.CertFile)
	case o.CertFile == "":
		return nil, fmt.Errorf("transport: client key %s given without its certificate file", o.KeyFile)
	default:
		certPEM, err := safefile.ReadFile(o.CertFile, maxPEMFile)
		if err != nil {
			return nil, fmt.Errorf("transport: client certificate: %w", err)
		}
		keyPEM, err := safefile.ReadFile(o.KeyFile, maxPEMFile)
		if err != nil {
			return nil, fmt.Errorf("transport: client key: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("transport: client certificate %s with key %s: %w", o.CertFile, o.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
