package alsa

import (
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		out       string
		want      int
		hasSwitch bool
		tolerance int
	}{
		{
			name: "stereo pulse",
			out: `Simple mixer control 'Master',0
  Capabilities: pvolume pswitch pswitch-joined
  Playback channels: Front Left - Front Right
  Limits: Playback 0 - 65536
  Mono:
  Front Left: Playback 41288 [63%] [on]
  Front Right: Playback 41288 [63%] [on]
`,
			want: 63, hasSwitch: true, tolerance: 2,
		},
		{
			name: "mono with dB and switch off",
			out: `Simple mixer control 'Master',0
  Capabilities: pvolume pvolume-joined pswitch pswitch-joined
  Playback channels: Mono
  Limits: Playback 0 - 42
  Mono: Playback 40 [95%] [-3.00dB] [off]
`,
			want: 0, hasSwitch: true, tolerance: 4,
		},
		{
			name: "unbalanced stereo is the mean, rounded",
			out: `Simple mixer control 'PCM',0
  Capabilities: pvolume
  Playback channels: Front Left - Front Right
  Limits: Playback 0 - 255
  Mono:
  Front Left: Playback 253 [99%] [-0.40dB]
  Front Right: Playback 128 [50%] [-20.00dB]
`,
			want: 75, tolerance: 2,
		},
		{
			name: "one channel muted",
			out: `Simple mixer control 'Speaker',0
  Capabilities: pvolume pswitch
  Playback channels: Front Left - Front Right
  Limits: Playback 0 - 100
  Mono:
  Front Left: Playback 80 [80%] [on]
  Front Right: Playback 80 [80%] [off]
`,
			want: 40, hasSwitch: true, tolerance: 2,
		},
		{
			name: "playback and capture on one line",
			out: `Simple mixer control 'Line',0
  Capabilities: pvolume pswitch cvolume cswitch
  Playback channels: Mono
  Capture channels: Mono
  Limits: Playback 0 - 31 Capture 0 - 15
  Mono: Playback 31 [100%] [0.00dB] [on] Capture 0 [0%] [0.00dB] [off]
`,
			want: 100, hasSwitch: true, tolerance: 5,
		},
		{
			name: "common volume",
			out: `Simple mixer control 'Front Mic Boost',0
  Capabilities: volume
  Playback channels: Front Left - Front Right
  Capture channels: Front Left - Front Right
  Limits: 0 - 3
  Front Left: 1 [33%] [10.00dB]
  Front Right: 1 [33%] [10.00dB]
`,
			want: 33, tolerance: 35,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := parse(tt.out)
			if err != nil {
				t.Fatal(err)
			}
			if !st.hasVolume {
				t.Errorf("hasVolume = false")
			}
			if got := st.percent(); got != tt.want {
				t.Errorf("percent() = %d, want %d", got, tt.want)
			}
			if st.hasSwitch != tt.hasSwitch {
				t.Errorf("hasSwitch = %v, want %v", st.hasSwitch, tt.hasSwitch)
			}
			if got := st.tolerance(); got != tt.tolerance {
				t.Errorf("tolerance() = %d, want %d", got, tt.tolerance)
			}
		})
	}
}

func TestParseCaptureOnly(t *testing.T) {
	st, err := parse(`Simple mixer control 'Capture',0
  Capabilities: cvolume cswitch
  Capture channels: Front Left - Front Right
  Limits: Capture 0 - 65536
  Front Left: Capture 65536 [100%] [on]
  Front Right: Capture 65536 [100%] [on]
`)
	if err != nil {
		t.Fatal(err)
	}
	if st.hasVolume || st.hasSwitch || len(st.channels) != 0 {
		t.Errorf("capture-only control parsed as %+v, want no playback volume, switch or channels", st)
	}
}

func TestParseRejects(t *testing.T) {
	for _, out := range []string{
		"",
		"hello\n",
		"Simple mixer control 'Master',0\n  Capabilities: pvolume\n",
		"Simple mixer control 'Master',0\n  Capabilities: pvolume\n  Mono: Playback 7 [107%]\n",
		"Simple mixer control 'Master',0\n  Capabilities: pvolume\n  Mono: Playback 7 [x%]\n",
	} {
		if st, err := parse(out); err == nil {
			t.Errorf("parse(%q) = %+v, want an error", out, st)
		}
	}
}
