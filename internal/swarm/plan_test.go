package swarm

import (
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/protocol"
)

func TestNewPlan(t *testing.T) {
	p, err := NewPlan(300, "02:dc:7e", 2*time.Second, time.Second, nil)
	if err != nil || p.N != 300 || string(p.Prefix) != "\x02\xdc\x7e" || p.Ramp != 2*time.Second || p.Interval != time.Second {
		t.Fatalf("NewPlan: %+v, %v", p, err)
	}
	// Every spelling of a MAC spells a prefix.
	for _, prefix := range []string{"02-DC-7E", "02dc7e", "02DC7E"} {
		if p, err := NewPlan(3, prefix, 0, time.Second, nil); err != nil || string(p.Prefix) != "\x02\xdc\x7e" {
			t.Errorf("NewPlan(3, %q): prefix % X, %v", prefix, p.Prefix, err)
		}
	}
	limit := func() (uint64, uint64, bool) { return 1024, 4096, true }
	for _, tc := range []struct {
		n        int
		prefix   string
		ramp     time.Duration
		interval time.Duration
		want     string
	}{
		{0, "02", 0, time.Second, "-n 0: want at least 1 device"},
		{3, "zz", 0, time.Second, `--mac-prefix: "zz" is not a MAC prefix: character 1 is "z", not a hex digit (want 1 to 5 hex pairs such as 02-DC)`},
		{3, "02-DC:7E", 0, time.Second, `--mac-prefix: "02-DC:7E" is not a MAC prefix: character 6 is ":", not the separator character 3 is`},
		{3, "02-DC7E", 0, time.Second, `--mac-prefix: "02-DC7E" is not a MAC prefix: character 6 is "7", not the separator character 3 is`},
		{3, " 02-DC", 0, time.Second, `--mac-prefix: " 02-DC" is not a MAC prefix: character 1 is " "`},
		{3, "02-00-00-00-00-00", 0, time.Second, `--mac-prefix: "02-00-00-00-00-00" is not a MAC prefix: it has 6 pairs, not 1 to 5`},
		{3, "00-1A", 0, time.Second, `--mac-prefix: "00-1A": the first byte must be locally administered`},
		{3, "03", 0, time.Second, "locally administered"},
		{257, "02-00-00-00-00", 0, time.Second, "-n 257: --mac-prefix 02-00-00-00-00 leaves room for 256 devices"},
		{256, "02-00-00-00-00", -time.Second, time.Second, "--ramp -1s: want 0s or more"},
		{3, "02", 0, 0, "--interval 0s: want a positive duration"},
		{1000, "02", 0, time.Second, "-n 1000 needs about 1164 open files"},
	} {
		if _, err := NewPlan(tc.n, tc.prefix, tc.ramp, tc.interval, limit); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewPlan(%d, %q, %s, %s): %v, want %q", tc.n, tc.prefix, tc.ramp, tc.interval, err, tc.want)
		}
	}
	if _, err := NewPlan(800, "02", 0, time.Second, limit); err != nil {
		t.Errorf("800 devices in 1024 files: %v", err)
	}
}

func TestCheckOpenFiles(t *testing.T) {
	if err := CheckOpenFiles(10000, 20000, 20000); err != nil {
		t.Errorf("10000 devices in 20000 files: %v", err)
	}
	err := CheckOpenFiles(10000, 1024, 4096)
	if err == nil {
		t.Fatal("10000 devices in 1024 files: no error")
	}
	for _, want := range []string{"-n 10000 needs about 11064 open files", "the limit is 1024 (hard limit 4096)", "ulimit -n 11064", "LimitNOFILE=11064"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := CheckOpenFiles(1000, parseLimit("unlimited"), parseLimit("unlimited")); err != nil {
		t.Errorf("unlimited: %v", err)
	}
}

func TestSwarmMAC(t *testing.T) {
	cases := []struct {
		prefix []byte
		i      int
		want   string
	}{
		{[]byte{0x02, 0xdc}, 0, "02-DC-00-00-00-00"},
		{[]byte{0x02, 0xdc}, 1, "02-DC-00-00-00-01"},
		{[]byte{0x02, 0xdc}, 9999, "02-DC-00-00-27-0F"},
		{[]byte{0x02, 0xdc}, 1<<31 - 1, "02-DC-7F-FF-FF-FF"}, // the largest int of a 32-bit board
		{[]byte{0x0a, 1, 2, 3, 4}, 255, "0A-01-02-03-04-FF"},
		{[]byte{0xfe}, 1 << 24, "FE-00-01-00-00-00"},
	}
	for _, tc := range cases {
		got := MAC(tc.prefix, tc.i)
		if got != tc.want {
			t.Errorf("MAC(% x, %d) = %s, want %s", tc.prefix, tc.i, got, tc.want)
		}
		if norm, err := protocol.ParseMAC(got); err != nil || norm != got {
			t.Errorf("%s is not in the protocol's form: %q %v", got, norm, err)
		}
	}
	seen := map[string]bool{}
	for i := range 70000 { // past two bytes' worth, so every byte takes part
		m := MAC([]byte{0x02, 0xdc}, i)
		if seen[m] {
			t.Fatalf("device %d repeats MAC %s", i, m)
		}
		seen[m] = true
	}
	if a, b := ClientID("02-DC-00-00-00-00"), ClientID("02-DC-00-00-00-01"); a == b || a != ClientID("02-DC-00-00-00-00") {
		t.Errorf("Client-Ids %s and %s: want stable and distinct", a, b)
	}
	if id := ClientID("02-DC-00-00-00-00"); len(id) != 36 || id[14] != '5' || !strings.ContainsRune("89ab", rune(id[19])) {
		t.Errorf("Client-Id %s is not a version 5 UUID", id)
	}
}
