package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"strings"

	"github.com/devicectl/devicectl/internal/safefile"
)

// maxPEMFile bounds a CA bundle, certificate or key file read; a system CA bundle is a few hundred
// KiB.
const maxPEMFile = 1 << 20

// TLSConfig returns the TLS settings for wss:// servers, nil when all are ws:// (TLS keys then do nothing,
// which is worth a warning). It reads the files the keys name; an error is an *Error on the key
// whose file is wrong, naming the file and what is wrong with it. The defaults are the system
// roots and full verification.
func TLSConfig(c ServerConfig, log *slog.Logger) (*tls.Config, error) {
	wss := false
	for _, u := range c.Servers() {
		wss = wss || strings.HasPrefix(u, "wss://")
	}
	if !wss {
		if c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" || c.ServerName != "" || c.InsecureSkipVerify {
			log.Warn("the server is not wss://; the TLS settings are not used", "servers", c.Servers())
		}
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
	if c.CAFile != "" {
		pem, err := safefile.ReadFile(c.CAFile, maxPEMFile)
		if err != nil {
			return nil, &Error{Key: "server.ca_file", Err: fmt.Errorf("CA file: %w", err)} // names the file
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &Error{Key: "server.ca_file", Err: fmt.Errorf("CA file %s: no PEM certificate in it", c.CAFile)}
		}
		cfg.RootCAs = pool
	}
	switch {
	case c.CertFile == "" && c.KeyFile == "":
	case c.KeyFile == "":
		return nil, &Error{Key: "server.key_file", Err: fmt.Errorf("client certificate %s given without its key file", c.CertFile)}
	case c.CertFile == "":
		return nil, &Error{Key: "server.cert_file", Err: fmt.Errorf("client key %s given without its certificate file", c.KeyFile)}
	default:
		certPEM, err := safefile.ReadFile(c.CertFile, maxPEMFile)
		if err != nil {
			return nil, &Error{Key: "server.cert_file", Err: fmt.Errorf("client certificate: %w", err)}
		}
		keyPEM, err := safefile.ReadFile(c.KeyFile, maxPEMFile)
		if err != nil {
			return nil, &Error{Key: "server.key_file", Err: fmt.Errorf("client key: %w", err)}
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, &Error{Key: "server.cert_file", Err: fmt.Errorf("client certificate %s with key %s: %w", c.CertFile, c.KeyFile, err)}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
