//go:build devicectl_omit_opentooltls

package daemon

import (
	"crypto/tls"
	"errors"
	"net"

	"github.com/devicectl/devicectl/internal/config"
)

// errNoOpenToolTLS is why a build with the devicectl_omit_opentooltls tag (the board build)
// refuses opentool.cert_file: Go's TLS server would take the armv6 binary past its budget.
var errNoOpenToolTLS = errors.New("this devicectl is built without HTTPS for the OpenTool server (the devicectl_omit_opentooltls build tag); make build includes it, or put a TLS proxy in front of opentool.listen")

func loadOpenToolCert(o config.OpenToolConfig) (*tls.Certificate, error) {
	if o.CertFile == "" {
		return nil, nil
	}
	return nil, &config.Error{Key: "opentool.cert_file", Err: errNoOpenToolTLS}
}

// openToolTLS is never called: without a certificate the server speaks plain HTTP.
func openToolTLS(ln net.Listener, _ func() *tls.Certificate) net.Listener { return ln }
