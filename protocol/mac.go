package protocol

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseMAC returns mac as the protocol writes it, AA-BB-CC-DD-EE-FF. It takes six hex pairs in
// either case, joined all by '-', all by ':', or not joined (see the package documentation);
// anything else is an error that says which character is wrong. A MAC already in the protocol's
// form is returned as is.
func ParseMAC(mac string) (string, error) {
	if i, why := checkMAC(mac); why != "" {
		return "", macError(mac, i, why)
	}
	if mac[2] == '-' && strings.IndexAny(mac, "abcdef") < 0 {
		return mac, nil // already so: no copy
	}
	step := 2 // twelve digits
	if len(mac) == 17 {
		step = 3
	}
	var b [6]byte
	for i := range b {
		b[i] = unhex(mac[i*step])<<4 | unhex(mac[i*step+1])
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

// checkMAC holds mac to the grammar. When it breaks it, why says how: at byte i, or, with i < 0,
// by its length.
func checkMAC(mac string) (i int, why string) {
	for i, r := range mac {
		if r >= utf8.RuneSelf {
			return i, ", which no MAC address holds"
		}
	}
	switch len(mac) {
	case 12:
		for i := range 12 {
			if unhex(mac[i]) > 15 {
				return i, ", not a hex digit"
			}
		}
	case 17:
		for i := range 17 {
			switch c := mac[i]; {
			case i == 2 && c != '-' && c != ':':
				return i, " where '-' or ':' goes"
			case i%3 == 2 && c != mac[2]:
				return i, ", not the separator character 3 is"
			case i%3 != 2 && unhex(c) > 15:
				return i, ", not a hex digit"
			}
		}
	default:
		return -1, "length"
	}
	return 0, ""
}

// unhex is the value of the hex digit c, or 255.
func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// macError is the error for mac, which checkMAC refused at i for why.
func macError(mac string, i int, why string) error {
	var reason string
	switch {
	case i >= 0:
		_, size := utf8.DecodeRuneInString(mac[i:])
		reason = "character " + strconv.Itoa(utf8.RuneCountInString(mac[:i])+1) + " is " + strconv.Quote(mac[i:i+size]) + why
	case mac == "":
		reason = "it is empty"
	default:
		reason = "it is " + strconv.Itoa(len(mac)) + " characters long, not 17 (or 12 without separators)"
	}
	if len(mac) > 40 { // a mac_addr is the peer's input: do not echo a page of it
		mac = mac[:40] + "..."
	}
	return errors.New(strconv.Quote(mac) + " is not a MAC address: " + reason + " (want six hex pairs such as AA-BB-CC-DD-EE-FF)")
}
