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
	decodePairs(b[:], mac, step)
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
	switch len(mac) {
	case 12, 17:
		return checkPairs(mac, len(mac) == 17)
	}
	if i, why := checkASCII(mac); why != "" {
		return i, why
	}
	return -1, "length"
}

// checkPairs holds s, hex pairs and nothing else, to the grammar's characters: with joined, a
// '-' or ':' after each pair but the last, the same one each time; without, no separator at all.
// Whether the pairs are whole and how many there are is for the caller. When s breaks it, why says
// how at byte i.
func checkPairs(s string, joined bool) (i int, why string) {
	if i, why := checkASCII(s); why != "" {
		return i, why
	}
	for i := range len(s) {
		switch c := s[i]; {
		case joined && i == 2 && c != '-' && c != ':':
			return i, " where '-' or ':' goes"
		case joined && i%3 == 2 && c != s[2]:
			return i, ", not the separator character 3 is"
		case (!joined || i%3 != 2) && unhex(c) > 15:
			return i, ", not a hex digit"
		}
	}
	return 0, ""
}

// checkASCII refuses a character beyond ASCII, at byte i.
func checkASCII(s string) (i int, why string) {
	for i, r := range s {
		if r >= utf8.RuneSelf {
			return i, ", which no MAC address holds"
		}
	}
	return 0, ""
}

// ParseMACPrefix reads the first one to five bytes of a MAC address, spelled as ParseMAC reads a
// whole one: hex pairs in either case, joined all by '-', all by ':', or not joined (02-DC,
// 02:dc, 02dc). Anything else is an error that says what is wrong.
func ParseMACPrefix(prefix string) ([]byte, error) {
	joined := len(prefix) > 2 && unhex(prefix[2]) > 15 // not a digit third: the pairs are joined
	if i, why := checkPairs(prefix, joined); why != "" {
		return nil, prefixError(prefix, charReason(prefix, i, why))
	}
	step, rest := 2, len(prefix)%2 // rest: the characters after the last whole pair
	if joined {
		step, rest = 3, (len(prefix)+1)%3
	}
	n := (len(prefix) + 1) / step
	switch {
	case prefix == "":
		return nil, prefixError(prefix, "it is empty")
	case joined && rest == 1:
		return nil, prefixError(prefix, "it ends in a separator")
	case rest != 0:
		return nil, prefixError(prefix, "it ends in half a pair")
	case n > 5:
		return nil, prefixError(prefix, "it has "+strconv.Itoa(n)+" pairs, not 1 to 5")
	}
	b := make([]byte, n)
	decodePairs(b, prefix, step)
	return b, nil
}

// decodePairs fills b with the hex pairs of s, which checkPairs took, one every step bytes.
func decodePairs(b []byte, s string, step int) {
	for i := range b {
		b[i] = unhex(s[i*step])<<4 | unhex(s[i*step+1])
	}
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
		reason = charReason(mac, i, why)
	case mac == "":
		reason = "it is empty"
	default:
		reason = "it is " + strconv.Itoa(len(mac)) + " characters long, not 17 (or 12 without separators)"
	}
	return notA(mac, "MAC address", reason, "six hex pairs such as AA-BB-CC-DD-EE-FF")
}

// prefixError is the error for a prefix ParseMACPrefix refused for reason.
func prefixError(prefix, reason string) error {
	return notA(prefix, "MAC prefix", reason, "1 to 5 hex pairs such as 02-DC")
}

// charReason says that s breaks the grammar at byte i, for why.
func charReason(s string, i int, why string) string {
	_, size := utf8.DecodeRuneInString(s[i:])
	return "character " + strconv.Itoa(utf8.RuneCountInString(s[:i])+1) + " is " + strconv.Quote(s[i:i+size]) + why
}

// notA is the error saying s is not a what, because of reason, and what is wanted instead.
func notA(s, what, reason, want string) error {
	if len(s) > 40 { // a mac_addr is the peer's input: do not echo a page of it
		s = s[:40] + "..."
	}
	return errors.New(strconv.Quote(s) + " is not a " + what + ": " + reason + " (want " + want + ")")
}
