package protocol

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MACError is a MAC address ParseMAC refused; Reason says what is wrong with it.
type MACError struct {
	MAC    string
	Reason string
}

func (e *MACError) Error() string {
	shown := e.MAC
	if len(shown) > 40 { // a mac_addr is the peer's input: do not echo a page of it
		shown = shown[:40] + "..."
	}
	return fmt.Sprintf("%q is not a MAC address: %s (want six hex pairs such as AA-BB-CC-DD-EE-FF)", shown, e.Reason)
}

// ParseMAC returns mac as the protocol writes it, AA-BB-CC-DD-EE-FF. It takes six hex pairs in
// either case, joined all by '-', all by ':', or not joined (see the package documentation);
// anything else is a *MACError. A MAC already in the protocol's form is returned as is.
func ParseMAC(mac string) (string, error) {
	for i, r := range mac {
		if r >= utf8.RuneSelf {
			return "", &MACError{mac, fmt.Sprintf("character %d is %s, which no MAC address holds", utf8.RuneCountInString(mac[:i])+1, char(mac, i))}
		}
	}
	var b [6]byte // ASCII from here on: a byte is a character
	switch len(mac) {
	case 12:
		for i := range b {
			hi, lo, err := pair(mac, 2*i)
			if err != nil {
				return "", err
			}
			b[i] = hi<<4 | lo
		}
	case 17:
		sep := mac[2]
		if sep != '-' && sep != ':' {
			return "", &MACError{mac, fmt.Sprintf("character 3 is %s where '-' or ':' goes", char(mac, 2))}
		}
		for i := range b {
			if i > 0 && mac[3*i-1] != sep {
				return "", &MACError{mac, fmt.Sprintf("character %d is %s, not %q like the first separator", 3*i, char(mac, 3*i-1), sep)}
			}
			hi, lo, err := pair(mac, 3*i)
			if err != nil {
				return "", err
			}
			b[i] = hi<<4 | lo
		}
	case 0:
		return "", &MACError{mac, "it is empty"}
	default:
		return "", &MACError{mac, fmt.Sprintf("it is %d characters long, not 17 (or 12 without separators)", len(mac))}
	}
	if len(mac) == 17 && mac[2] == '-' && strings.IndexAny(mac, "abcdef") < 0 {
		return mac, nil // already so: no copy
	}
	return FormatMAC(b[:]), nil
}

// FormatMAC writes a hardware address the protocol's way: upper-case hex pairs joined by '-'. A
// 48-bit address (six bytes) is what mac_addr carries.
func FormatMAC(hw []byte) string {
	const digits = "0123456789ABCDEF"
	out := make([]byte, 0, 3*len(hw))
	for i, c := range hw {
		if i > 0 {
			out = append(out, '-')
		}
		out = append(out, digits[c>>4], digits[c&0xf])
	}
	return string(out)
}

// pair decodes the hex digits at mac[i] and mac[i+1].
func pair(mac string, i int) (hi, lo byte, err error) {
	var ok bool
	if hi, ok = unhex(mac[i]); !ok {
		return 0, 0, &MACError{mac, fmt.Sprintf("character %d is %s, not a hex digit", i+1, char(mac, i))}
	}
	if lo, ok = unhex(mac[i+1]); !ok {
		return 0, 0, &MACError{mac, fmt.Sprintf("character %d is %s, not a hex digit", i+2, char(mac, i+1))}
	}
	return hi, lo, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// char shows the character at byte i of s, quoted; a byte that starts no valid UTF-8 sequence is
// shown as its value.
func char(s string, i int) string {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return fmt.Sprintf("byte 0x%02x", s[i])
	}
	return fmt.Sprintf("%q", r)
}
