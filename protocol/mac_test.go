package protocol_test

import (
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/protocol"
)

func TestParseMAC(t *testing.T) {
	testParse(t, "ParseMAC", protocol.ParseMAC, "MAC address", "six hex pairs such as AA-BB-CC-DD-EE-FF", []parseCase{
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
	})
}

// parseCase is an input of a parser and what it makes of it.
type parseCase struct {
	in, want string // want: the protocol's form of what it reads, "" for an error
	reason   string // a substring of the error's reason when want is ""
}

// testParse checks parse, named fn, on cases: a refusal says in is not a what and why, and ends
// saying what is wanted.
func testParse(t *testing.T, fn string, parse func(string) (string, error), what, wanted string, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		got, err := parse(tc.in)
		if tc.want != "" {
			if got != tc.want || err != nil {
				t.Errorf("%s(%q) = %q, %v; want %q", fn, tc.in, got, err, tc.want)
			}
			continue
		}
		if got != "" || err == nil {
			t.Errorf("%s(%q) = %q, %v; want an error", fn, tc.in, got, err)
			continue
		}
		want := strconv.Quote(tc.in) + " is not a " + what + ": " + tc.reason
		if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "(want "+wanted+")") {
			t.Errorf("%s(%q): error %q, want it to start %q and say what is wanted", fn, tc.in, msg, want)
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

func TestParseMACPrefix(t *testing.T) {
	parse := func(prefix string) (string, error) {
		b, err := protocol.ParseMACPrefix(prefix)
		if b == nil {
			return "", err
		}
		return protocol.FormatMAC(b), err
	}
	testParse(t, "ParseMACPrefix", parse, "MAC prefix", "1 to 5 hex pairs such as 02-DC", []parseCase{
		{"02", "02", ""},
		{"02-DC", "02-DC", ""},
		{"02:dc:7e", "02-DC-7E", ""},
		{"02dc7e", "02-DC-7E", ""},
		{"aa-BB-cc-DD-ee", "AA-BB-CC-DD-EE", ""},
		{"0A0B0C0D0E", "0A-0B-0C-0D-0E", ""},

		{"", "", "it is empty"},
		{"0", "", "it ends in half a pair"},
		{"02DC7", "", "it ends in half a pair"},
		{"02-D", "", "it ends in half a pair"},
		{"02-", "", "it ends in a separator"},
		{"02:DC:", "", "it ends in a separator"},
		{"02-DC:7E", "", `character 6 is ":", not the separator character 3 is`},
		{"02:DC-7E", "", `character 6 is "-", not the separator character 3 is`},
		{"02.DC", "", `character 3 is "." where '-' or ':' goes`},
		{"0-2DC", "", `character 2 is "-", not a hex digit`},
		{"02-DC-00-00-00-00", "", "it has 6 pairs, not 1 to 5"},
		{"020000000000", "", "it has 6 pairs, not 1 to 5"},
		{" 02", "", `character 1 is " ", not a hex digit`},
		{"zz", "", `character 1 is "z", not a hex digit`},
		{"02-É", "", `character 4 is "É", which no MAC address holds`},
	})
}

// FuzzParseMACPrefix checks ParseMACPrefix against the grammar written out another way
// (prefixGrammar), and every spelling of what it read against it again.
func FuzzParseMACPrefix(f *testing.F) {
	for _, s := range []string{"02", "02-DC", "02:dc:7e", "02dc7e", "02-DC:7E", "0-2DC", "02-", "02-D", "", "É", "02-DC-00-00-00-00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := protocol.ParseMACPrefix(in)
		b, ok := prefixGrammar(in)
		if !ok {
			if got != nil || err == nil || !strings.Contains(err.Error(), " is not a MAC prefix: it") && !strings.Contains(err.Error(), " is not a MAC prefix: character ") {
				t.Fatalf("ParseMACPrefix(%q) = % X, %v; want an error that says what is wrong", in, got, err)
			}
			return
		}
		if err != nil || string(got) != string(b) {
			t.Fatalf("ParseMACPrefix(%q) = % X, %v; want % X", in, got, err, b)
		}
		form := protocol.FormatMAC(b)
		for _, spelling := range []string{form, strings.ToLower(form), strings.ReplaceAll(form, "-", ":"), strings.ReplaceAll(form, "-", "")} {
			if again, err := protocol.ParseMACPrefix(spelling); string(again) != string(b) || err != nil {
				t.Fatalf("ParseMACPrefix(%q) = % X, %v; want % X", spelling, again, err, b)
			}
		}
	})
}

// prefixGrammar reads in as the package documentation says a prefix is written: one to five hex
// pairs, not joined, or joined all by '-' or all by ':'.
func prefixGrammar(in string) ([]byte, bool) {
	for n := 1; n <= 5; n++ {
		if len(in) == 2*n {
			if b, err := hex.DecodeString(in); err == nil {
				return b, true
			}
		}
		for _, sep := range []string{"-", ":"} {
			parts := strings.Split(in, sep)
			if n == 1 || len(parts) != n {
				continue
			}
			whole := true
			for _, p := range parts {
				whole = whole && len(p) == 2
			}
			if b, err := hex.DecodeString(strings.Join(parts, "")); whole && err == nil {
				return b, true
			}
		}
	}
	return nil, false
}
