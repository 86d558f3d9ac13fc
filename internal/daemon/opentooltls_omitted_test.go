//go:build devicectl_omit_opentooltls

package daemon

import (
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/config"
)

// A build without the TLS server refuses opentool.cert_file, saying why, rather than serve the
// keys in clear when HTTPS was asked for.
func TestOpenToolTLSOmitted(t *testing.T) {
	if cert, err := loadOpenToolCert(config.OpenToolConfig{}); cert != nil || err != nil {
		t.Errorf("no certificate configured: %v, %v; want nothing", cert, err)
	}
	_, err := loadOpenToolCert(config.OpenToolConfig{CertFile: "/etc/devicectl/cert.pem", KeyFile: "/etc/devicectl/key.pem"})
	if err == nil || !strings.HasPrefix(err.Error(), "opentool.cert_file: ") || !strings.Contains(err.Error(), "devicectl_omit_opentooltls") {
		t.Errorf("a certificate configured: %v; want an error naming opentool.cert_file and the tag", err)
	}
}
