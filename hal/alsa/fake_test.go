package alsa

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/halconform"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// coarseMixer is a fake amixer with a stereo control of 32 raw steps and a
// playback switch, keeping its state in a file, as a codec would: levels
// round to the control's steps (50% sets raw 16, which reads as 52%).
const coarseMixer = `
state="$dir/state"
[ -f "$state" ] || echo "10 on" > "$state"
read raw sw < "$state"
if [ "$3" = sset ]; then
	pct=${5%\%}
	raw=$(( (pct * 31 + 50) / 100 ))
	case "$6" in mute) sw=off ;; unmute) sw=on ;; esac
	echo "$raw $sw" > "$state"
fi
pct=$(( (raw * 100 + 15) / 31 ))
cat <<END
Simple mixer control '$4',0
  Capabilities: pvolume pswitch
  Playback channels: Front Left - Front Right
  Limits: Playback 0 - 31
  Mono:
  Front Left: Playback $raw [$pct%] [$sw]
  Front Right: Playback $raw [$pct%] [$sw]
END
`

func TestFakeCoarseControl(t *testing.T) {
	ctx := context.Background()
	cmd := pulsetest.Fake(t, "amixer", coarseMixer)
	s, err := New(ctx, &Options{Device: "hw:1", Control: "Speaker", Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "alsa:hw:1/Speaker"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if v, err := s.Volume(ctx); err != nil || v != 32 {
		t.Errorf("Volume() = %d, %v; want 32 (raw 10 of 31)", v, err)
	}
	if err := s.SetVolume(ctx, 50); err != nil {
		t.Fatalf("SetVolume(50) on a 32-step control: %v", err)
	}
	if v, err := s.Volume(ctx); err != nil || v != 52 {
		t.Errorf("Volume() after SetVolume(50) = %d, %v; want 52, the control's nearest step", v, err)
	}
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := s.Halt(); err != nil {
		t.Fatalf("second Halt: %v", err)
	}
	if v, err := s.Volume(ctx); err != nil || v != 0 {
		t.Errorf("Volume() after Halt = %d, %v; want 0", v, err)
	}
	want := [][]string{
		{"-D", "hw:1", "sget", "Speaker"},
		{"-D", "hw:1", "sget", "Speaker"},
		{"-D", "hw:1", "sset", "Speaker", "50%", "unmute"},
		{"-D", "hw:1", "sget", "Speaker"},
		{"-D", "hw:1", "sget", "Speaker"},
		{"-D", "hw:1", "sset", "Speaker", "0%", "mute"},
		{"-D", "hw:1", "sset", "Speaker", "0%", "mute"},
		{"-D", "hw:1", "sget", "Speaker"},
	}
	if got := pulsetest.Calls(t, cmd); !reflect.DeepEqual(got, want) {
		t.Errorf("amixer runs:\n got %q\nwant %q", got, want)
	}
}

func TestFakeDefaultsAndVerbatimArguments(t *testing.T) {
	ctx := context.Background()
	cmd := pulsetest.Fake(t, "amixer", coarseMixer)
	s, err := New(ctx, &Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "alsa:default/Master"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// A name a shell would act on must reach amixer as one argument.
	odd := `Master'; touch "pwned" $(id)`
	if _, err := New(ctx, &Options{Command: cmd, Control: odd}); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"-D", "default", "sget", "Master"}, {"-D", "default", "sget", odd}}
	if got := pulsetest.Calls(t, cmd); !reflect.DeepEqual(got, want) {
		t.Errorf("amixer runs:\n got %q\nwant %q", got, want)
	}
}

func TestFakeControlWithoutSwitch(t *testing.T) {
	ctx := context.Background()
	cmd := pulsetest.Fake(t, "amixer", `cat <<END
Simple mixer control 'PCM',0
  Capabilities: pvolume
  Playback channels: Mono
  Limits: Playback 0 - 100
  Mono: Playback 0 [0%]
END
`)
	s, err := New(ctx, &Options{Control: "PCM", Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	got := pulsetest.Calls(t, cmd)
	if want := []string{"-D", "default", "sset", "PCM", "0%"}; !reflect.DeepEqual(got[len(got)-1], want) {
		t.Errorf("Halt ran %q, want %q (no mute word for a control without a switch)", got[len(got)-1], want)
	}
}

func TestOutOfRangeAndCancelledRunNothing(t *testing.T) {
	cmd := pulsetest.Fake(t, "amixer", coarseMixer)
	s, err := New(context.Background(), &Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	halconform.SpeakerOutOfRange(t, s)
	halconform.SpeakerCancelled(t, s)
	if n := len(pulsetest.Calls(t, cmd)); n != 1 {
		t.Errorf("amixer ran %d times, want 1 (New only)", n)
	}
}

func TestFakeErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		opts Options
		want []string // substrings of the error
	}{
		{
			name: "missing control",
			body: "echo \"amixer: Unable to find simple control 'Speaker',0\" >&2\necho >&2\nexit 1\n",
			opts: Options{Control: "Speaker", Device: "hw:0"},
			want: []string{`control "Speaker"`, `device "hw:0"`, "exit status 1", "Unable to find simple control 'Speaker',0"},
		},
		{
			name: "missing device",
			body: "echo 'ALSA lib control.c:1528:(snd_ctl_open_noupdate) Invalid CTL hw:7' >&2\necho 'amixer: Mixer attach hw:7 error: No such file or directory' >&2\nexit 1\n",
			opts: Options{Device: "hw:7"},
			want: []string{`device "hw:7"`, `control "Master"`, "Invalid CTL hw:7; amixer: Mixer attach hw:7 error"},
		},
		{
			name: "nonzero exit, silent",
			body: "exit 3\n",
			want: []string{"amixer -D default sget Master failed: exit status 3"},
		},
		{
			name: "garbage output",
			body: "echo 'hello, world'\n",
			want: []string{"no mixer control", "hello, world"},
		},
		{
			name: "header but no channels",
			body: "printf \"Simple mixer control 'Master',0\\n  Capabilities: pvolume\\n\"\n",
			want: []string{"no playback volume"},
		},
		{
			name: "capture-only control",
			body: "printf \"Simple mixer control 'Capture',0\\n  Capabilities: cvolume cswitch\\n  Front Left: Capture 5 [5%%] [on]\\n\"\n",
			opts: Options{Control: "Capture"},
			want: []string{`"Capture"`, "has no playback volume", "cvolume cswitch"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.Command = pulsetest.Fake(t, "amixer", tt.body)
			s, err := New(context.Background(), &o)
			if err == nil {
				t.Fatalf("New = %v, nil; want an error", s)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestMissingCommand(t *testing.T) {
	_, err := New(context.Background(), &Options{Command: "devicectl-no-such-amixer"})
	if err == nil || !strings.Contains(err.Error(), "install alsa-utils") {
		t.Fatalf("New with a missing amixer = %v, want an error naming alsa-utils", err)
	}
}

// A failure after start-up (the sound card went away) must reach the
// caller as an error naming the speaker, not a stale number.
func TestFakeFailsLater(t *testing.T) {
	ctx := context.Background()
	cmd := pulsetest.Fake(t, "amixer", coarseMixer)
	s, err := New(ctx, &Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	broken := "#!/bin/sh\necho 'amixer: Mixer attach default error: No such device' >&2\nexit 1\n"
	if err := os.WriteFile(cmd, []byte(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Volume(ctx); err == nil || !strings.Contains(err.Error(), "alsa:default/Master: cannot read the volume") || !strings.Contains(err.Error(), "No such device") {
		t.Errorf("Volume = %v, want a read error naming the speaker and amixer's complaint", err)
	}
	if err := s.SetVolume(ctx, 10); err == nil || !strings.Contains(err.Error(), "cannot set the volume to 10%") {
		t.Errorf("SetVolume = %v, want an error", err)
	}
	if err := s.Halt(); err == nil || !strings.Contains(err.Error(), "cannot mute") {
		t.Errorf("Halt = %v, want an error", err)
	}
}

func TestNewOptionsNotMutated(t *testing.T) {
	o := &Options{Command: pulsetest.Fake(t, "amixer", coarseMixer)}
	want := *o
	if _, err := New(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if *o != want {
		t.Errorf("New changed the caller's options: %+v, want %+v", *o, want)
	}
}

func TestNilOptionsFindAmixerOnPath(t *testing.T) {
	cmd := pulsetest.Fake(t, "amixer", coarseMixer)
	t.Setenv("PATH", filepath.Dir(cmd)+string(os.PathListSeparator)+os.Getenv("PATH"))
	s, err := New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "alsa:default/Master"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if n := len(pulsetest.Calls(t, cmd)); n != 1 {
		t.Errorf("the amixer on PATH ran %d times, want 1", n)
	}
}
