//go:build !devicectl_omit_opentooltls

package daemon

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/devicectl/devicectl/internal/config"
)

// Go's TLS server handshake costs the armv6 binary about 190 KB, so the board build leaves it
// out (devicectl_omit_opentooltls; see internal/buildfeatures). The stand-ins are in
// opentooltls_omitted.go.

// loadOpenToolCert reads opentool.cert_file and opentool.key_file; nil when they are not set.
func loadOpenToolCert(o config.OpenToolConfig) (*tls.Certificate, error) {
	if o.CertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, &config.Error{Key: "opentool.cert_file", Err: fmt.Errorf("%s with opentool.key_file %s: %w", o.CertFile, o.KeyFile, err)}
	}
	return &cert, nil
}

// openToolTLS serves TLS on ln with the certificate cert returns, read at every handshake so
// that a reload can renew it in place.
func openToolTLS(ln net.Listener, cert func() *tls.Certificate) net.Listener {
	return tls.NewListener(ln, &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cert(), nil },
	})
}
