package hub

import (
	"strings"

	"github.com/devicectl/devicectl/protocol"
)

// normalMAC is protocol.ParseMAC for lookups: a MAC that does not parse is returned
// upper-cased, so it simply finds nothing.
func normalMAC(mac string) string {
	if m, err := protocol.ParseMAC(mac); err == nil {
		return m
	}
	return strings.ToUpper(mac)
}
