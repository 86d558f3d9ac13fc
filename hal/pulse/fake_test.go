package pulse

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

// fakeWpctl is a wpctl for one node, keeping volume and mute in a file and
// printing get-volume as WirePlumber 0.4 does.
const fakeWpctl = `
state="$dir/state"
[ -f "$state" ] || echo "0.40 0" > "$state"
read vol mute < "$state"
case "$1" in
set-volume) vol=$3 ;;
set-mute) mute=$3 ;;
get-volume)
	if [ "$mute" = 1 ]; then echo "Volume: $vol [MUTED]"; else echo "Volume: $vol"; fi
	exit 0 ;;
*) echo "unknown command $1" >&2; exit 1 ;;
esac
echo "$vol $mute" > "$state"
`

func TestFakeWpctl(t *testing.T) {
	ctx := context.Background()
	cmd := pulsetest.Fake(t, "wpctl", fakeWpctl)
	s, err := New(ctx, &Options{Tool: ToolWpctl, Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "wpctl:@DEFAULT_AUDIO_SINK@"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if v, err := s.Volume(ctx); err != nil || v != 40 {
		t.Errorf("Volume() = %d, %v; want 40", v, err)
	}
	if err := s.SetVolume(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Volume(ctx); err != nil || v != 7 {
		t.Errorf("Volume() after SetVolume(7) = %d, %v; want 7", v, err)
	}
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Volume(ctx); err != nil || v != 0 {
		t.Errorf("Volume() after Halt = %d, %v; want 0", v, err)
	}
	if err := s.SetVolume(ctx, 100); err != nil {
		t.Fatal(err)
	}
	n := "@DEFAULT_AUDIO_SINK@"
	want := [][]string{
		{"get-volume", n},
		{"get-volume", n},
		{"set-volume", n, "0.07"}, {"set-mute", n, "0"}, {"get-volume", n},
		{"get-volume", n},
		{"set-mute", n, "1"}, {"set-volume", n, "0.00"},
		{"get-volume", n},
		{"set-volume", n, "1.00"}, {"set-mute", n, "0"}, {"get-volume", n},
	}
	if got := pulsetest.Calls(t, cmd); !reflect.DeepEqual(got, want) {
		t.Errorf("wpctl runs:\n got %q\nwant %q", got, want)
	}
}

func TestFakeWpctlReadsTheServer(t *testing.T) {
	ctx := context.Background()
	cmd := pulsetest.Fake(t, "wpctl", fakeWpctl)
	s, err := New(ctx, &Options{Tool: ToolWpctl, Sink: "51", Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	// Someone else mutes the node: Volume must say so, not remember 40.
	if err := os.WriteFile(filepath.Join(filepath.Dir(cmd), "state"), []byte("0.40 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Volume(ctx); err != nil || v != 0 {
		t.Errorf("Volume() of a node muted elsewhere = %d, %v; want 0", v, err)
	}
}

func TestFakeErrors(t *testing.T) {
	tests := []struct {
		name string
		tool string
		body string
		want []string
	}{
		{
			name: "wpctl missing node",
			tool: ToolWpctl,
			body: "echo 'Translate ID error: 999 is not a valid ID' >&2\nexit 1\n",
			want: []string{`sink "@DEFAULT_AUDIO_SINK@" with wpctl`, "exit status 1", "Translate ID error"},
		},
		{
			name: "wpctl garbage",
			tool: ToolWpctl,
			body: "echo 'Volume: loud'\n",
			want: []string{"wpctl printed no volume", "Volume: loud"},
		},
		{
			name: "pactl no server",
			tool: ToolPactl,
			body: "echo 'Connection failure: Connection refused' >&2\necho 'pa_context_connect() failed: Connection refused' >&2\nexit 1\n",
			want: []string{`sink "@DEFAULT_SINK@" with pactl`, "Connection failure: Connection refused; pa_context_connect() failed"},
		},
		{
			name: "pactl garbage",
			tool: ToolPactl,
			body: "echo 'Volume: front-left: much'\n",
			want: []string{"pactl printed no volume"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(context.Background(), &Options{Tool: tt.tool, Command: pulsetest.Fake(t, tt.tool, tt.body)})
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

func TestUnknownToolAndMissingCommand(t *testing.T) {
	if _, err := New(context.Background(), &Options{Tool: "amixer"}); err == nil || !strings.Contains(err.Error(), `unknown tool "amixer"`) {
		t.Errorf("New with tool amixer = %v, want an unknown-tool error", err)
	}
	_, err := New(context.Background(), &Options{Tool: ToolWpctl, Command: "devicectl-no-such-wpctl"})
	if err == nil || !strings.Contains(err.Error(), "install wireplumber") {
		t.Errorf("New with a missing wpctl = %v, want an error naming wireplumber", err)
	}
	_, err = New(context.Background(), &Options{Command: "devicectl-no-such-pactl"})
	if err == nil || !strings.Contains(err.Error(), "install pulseaudio-utils") {
		t.Errorf("New with a missing pactl = %v, want an error naming pulseaudio-utils", err)
	}
}

func TestOutOfRangeAndCancelledRunNothing(t *testing.T) {
	cmd := pulsetest.Fake(t, "wpctl", fakeWpctl)
	s, err := New(context.Background(), &Options{Tool: ToolWpctl, Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	halconform.SpeakerOutOfRange(t, s)
	halconform.SpeakerCancelled(t, s)
	if n := len(pulsetest.Calls(t, cmd)); n != 1 {
		t.Errorf("wpctl ran %d times, want 1 (New only)", n)
	}
}
