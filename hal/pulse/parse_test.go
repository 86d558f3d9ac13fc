package pulse

import "testing"

func TestParsePactl(t *testing.T) {
	tests := []struct {
		vol, mute string
		want      int
	}{
		{"Volume: front-left: 21626 /  33% / -28.89 dB,   front-right: 21626 /  33% / -28.89 dB\n        balance 0.00\n", "Mute: no\n", 33},
		{"Volume: mono: 65536 / 100% / 0.00 dB\n        balance 0.00\n", "Mute: no\n", 100},
		{"Volume: front-left: 65536 / 100% / 0.00 dB,   front-right: 32768 /  50% / -18.06 dB\n        balance -0.50\n", "Mute: no\n", 75},
		{"Volume: front-left: 98304 / 150% / 10.57 dB,   front-right: 98304 / 150% / 10.57 dB\n", "Mute: no\n", 100},
		{"Volume: front-left: 41288 /  63% / -12.04 dB,   front-right: 41288 /  63% / -12.04 dB\n", "Mute: yes\n", 0},
		{"Volume: front-left: 0 /   0% / -inf dB,   front-right: 0 /   0% / -inf dB\n", "Mute: no\n", 0},
	}
	for _, tt := range tests {
		got, err := parsePactl(tt.vol, tt.mute)
		if err != nil || got != tt.want {
			t.Errorf("parsePactl(%q, %q) = %d, %v; want %d", tt.vol, tt.mute, got, err, tt.want)
		}
	}
}

func TestParsePactlRejects(t *testing.T) {
	tests := []struct{ vol, mute string }{
		{"", "Mute: no"},
		{"hello", "Mute: no"},
		{"Volume: front-left: lots", "Mute: no"},
		{"Volume: front-left: 65536 / 100% / 0.00 dB", ""},
		{"Volume: front-left: 65536 / 100% / 0.00 dB", "Stummschaltung: ja"},
		{"Volume: front-left: 65536 / 99999999999999999999% / 0.00 dB", "Mute: no"},
	}
	for _, tt := range tests {
		if got, err := parsePactl(tt.vol, tt.mute); err == nil {
			t.Errorf("parsePactl(%q, %q) = %d, want an error", tt.vol, tt.mute, got)
		}
	}
}

func TestParseWpctl(t *testing.T) {
	tests := []struct {
		out  string
		want int
	}{
		{"Volume: 0.40\n", 40},
		{"Volume: 0.40 [MUTED]\n", 0},
		{"Volume: 1.00\n", 100},
		{"Volume: 1.50\n", 100},
		{"Volume: 0.00\n", 0},
		{"Volume: 0.07\n", 7},
		{"Volume: 0.57\n", 57},
		{"Volume: 0.29\n", 29},
	}
	for _, tt := range tests {
		got, err := parseWpctl(tt.out)
		if err != nil || got != tt.want {
			t.Errorf("parseWpctl(%q) = %d, %v; want %d", tt.out, got, err, tt.want)
		}
	}
	for _, out := range []string{"", "Volume:", "Volume: loud", "Volume: -0.5", "Volume: NaN", "Volume: +Inf", "Level: 0.40", "Translate ID error: no object"} {
		if got, err := parseWpctl(out); err == nil {
			t.Errorf("parseWpctl(%q) = %d, want an error", out, got)
		}
	}
}

func TestWpctlArgumentsForEveryPercent(t *testing.T) {
	k := &sink{tool: ToolWpctl, name: "51"}
	for p := 0; p <= 100; p++ {
		arg := k.volumeArgs(p)[2]
		got, err := parseWpctl("Volume: " + arg + "\n")
		if err != nil || got != p {
			t.Errorf("set-volume %s reads back as %d, %v; want %d", arg, got, err, p)
		}
	}
}
