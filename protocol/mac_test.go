package protocol_test

import (
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/protocol"
)

func TestParseMAC(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		reason   string // a substring of the error's reason when want is ""
	}{
		{"AA-BB-CC-DD-EE-FF", "AA-BB-CC-DD-EE-FF", ""},
		{"aa-bb-cc-dd-ee-0f", "AA-BB-CC-DD-EE-0F", ""},
		{"aa:bb:cc:dd:ee:ff", "AA-BB-CC-DD-EE-FF", ""},
		{"Aa:bB:01:23:45:67", "AA-BB-01-23-45-67", ""},
		{"aabbccddeeff", "AA-BB-CC-DD-EE-FF", ""},
		{"0123456789AB", "01-23-45-67-89-AB", ""},

		{"", "", "it is empty"},
		{"AA-BB-CC-DD-EE", "", "it is 14 characters long, not 17"},
		{"AA-BB-CC-DD-EE-FF-00", "", "it is 20 characters long"},
		{" AA-BB-CC-DD-EE-FF", "", "it is 18 characters long"},
		{"AA-BB-CC-DD-EE-FG", "", `character 17 is "G", not a hex digit`},
		{"GA-BB-CC-DD-EE-FF", "", `character 1 is "G", not a hex digit`},
		{"aabbccddeefg", "", `character 12 is "g", not a hex digit`},
		{"AA-BB:CC-DD-EE-FF", "", `character 6 is ":", not the separator character 3 is`},
		{"AA.BB.CC.DD.EE.FF", "", `character 3 is "." where '-' or ':' goes`},
		{"AABB-CCDD-EEFF-00", "", `character 3 is "B" where`},
		{"AA BB CC DD EE FF", "", `character 3 is " " where`},
		{"AA-BB-CC-DD-EE-F\x00", "", `character 17 is "\x00", not a hex digit`},
		{"AA-BB-CC-DD-EE-É", "", `character 16 is "É", which no MAC address holds`},
		{"AA-BB-CC-DD-EE-F\xff", "", `character 17 is "\xff", which no MAC address holds`},
	} {
		got, err := protocol.ParseMAC(tc.in)
		if tc.want != "" {
			if got != tc.want || err != nil {
				t.Errorf("ParseMAC(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			continue
		}
		if got != "" || err == nil {
			t.Errorf("ParseMAC(%q) = %q, %v; want an error", tc.in, got, err)
			continue
		}
		want := strconv.Quote(tc.in) + " is not a MAC address: " + tc.reason
		if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "(want six hex pairs such as AA-BB-CC-DD-EE-FF)") {
			t.Errorf("ParseMAC(%q): error %q, want it to start %q and say what is wanted", tc.in, msg, want)
		}
	}
}

// A MAC in the protocol's form comes back as the same string, without a copy: lookups parse
// every MAC they are given.
func TestParseMACKeepsTheProtocolsForm(t *testing.T) {
	in := "02-DC-00-00-00-01"
	if n := testing.AllocsPerRun(100, func() { protocol.ParseMAC(in) }); n != 0 {
		t.Errorf("ParseMAC of a normal MAC allocates %v times", n)
	}
}

func TestMACErrorShortensLongInput(t *testing.T) {
	_, err := protocol.ParseMAC(strings.Repeat("A", 10000))
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("ParseMAC of 10000 bytes: error of %d bytes: %v", len(err.Error()), err)
	}
}

func TestFormatMAC(t *testing.T) {
	if got := protocol.FormatMAC([]byte{0x02, 0xdc, 0, 0x0a, 0xf0, 0xff}); got != "02-DC-00-0A-F0-FF" {
		t.Errorf("FormatMAC = %q", got)
	}
}

// FuzzParseMAC checks ParseMAC against the grammar written out another way (grammar): it takes
// exactly what the grammar takes, returns the protocol's form of the bytes read, and takes every
// spelling of those bytes again.
func FuzzParseMAC(f *testing.F) {
	for _, s := range []string{"AA-BB-CC-DD-EE-FF", "aa:bb:cc:dd:ee:ff", "aabbccddeeff", "AA-BB:CC-DD-EE-FF", "AA-B-BCC-DD-EE-FF", "", "É", "AA-BB-CC-DD-EE-F\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := protocol.ParseMAC(in)
		b, ok := grammar(in)
		if !ok {
			if got != "" || err == nil || !strings.Contains(err.Error(), " is not a MAC address: ") {
				t.Fatalf("ParseMAC(%q) = %q, %v; want an error", in, got, err)
			}
			if !strings.Contains(err.Error(), "character ") && !strings.Contains(err.Error(), " long, ") && in != "" {
				t.Fatalf("ParseMAC(%q): %v does not say what is wrong", in, err)
			}
			return
		}
		if err != nil || got != protocol.FormatMAC(b) {
			t.Fatalf("ParseMAC(%q) = %q, %v; want %q", in, got, err, protocol.FormatMAC(b))
		}
		for _, spelling := range []string{strings.ToLower(got), strings.ReplaceAll(got, "-", ":"), strings.ReplaceAll(got, "-", "")} {
			if again, err := protocol.ParseMAC(spelling); again != got || err != nil {
				t.Fatalf("ParseMAC(%q) = %q, %v; want %q", spelling, again, err, got)
			}
		}
	})
}

// grammar reads in as the package documentation says a MAC is written.
func grammar(in string) ([]byte, bool) {
	var digits string
	switch len(in) {
	case 12:
		digits = in
	case 17:
		if in[2] != '-' && in[2] != ':' {
			return nil, false
		}
		for i := 0; i < 17; i += 3 {
			if i > 0 && in[i-1] != in[2] {
				return nil, false
			}
			digits += in[i : i+2]
		}
	default:
		return nil, false
	}
	b, err := hex.DecodeString(digits)
	return b, err == nil
}
