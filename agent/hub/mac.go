package hub

import (
	"fmt"
	"strings"
)

// ParseMAC returns mac in the protocol's form, upper-case hex pairs joined by '-'
// (AA-BB-CC-DD-EE-FF). Lower case and ':' separators are accepted; anything else is an error that
// says what is wrong.
func ParseMAC(mac string) (string, error) {
	if len(mac) != 17 {
		return "", fmt.Errorf("mac_addr %q is not six hex pairs joined by '-' (AA-BB-CC-DD-EE-FF)", mac)
	}
	var b [17]byte
	sep := mac[2]
	if sep != '-' && sep != ':' {
		return "", fmt.Errorf("mac_addr %q is not six hex pairs joined by '-' (AA-BB-CC-DD-EE-FF)", mac)
	}
	for i := 0; i < 17; i++ {
		c := mac[i]
		if i%3 == 2 {
			if c != sep {
				return "", fmt.Errorf("mac_addr %q is not six hex pairs joined by '-' (AA-BB-CC-DD-EE-FF)", mac)
			}
			b[i] = '-'
			continue
		}
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'F':
		case c >= 'a' && c <= 'f':
			c -= 'a' - 'A'
		default:
			return "", fmt.Errorf("mac_addr %q is not six hex pairs joined by '-' (AA-BB-CC-DD-EE-FF)", mac)
		}
		b[i] = c
	}
	if s := string(b[:]); s != mac {
		return s, nil
	}
	return mac, nil
}

// normalMAC is ParseMAC for lookups: a MAC that does not parse is returned upper-cased, so it
// simply finds nothing.
func normalMAC(mac string) string {
	if m, err := ParseMAC(mac); err == nil {
		return m
	}
	return strings.ToUpper(mac)
}
