package mixerexec

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// program is a Mixer on a mixer program that takes "set N", "mute" and "read", printing the
// level for "read", as the backends' programs are driven through Run.
type program struct{ command string }

func (p program) run(ctx context.Context, args ...string) (string, error) {
	return Run(ctx, slog.New(slog.DiscardHandler), "mixer-utils", p.command, args...)
}

func (p program) Set(ctx context.Context, percent int) error {
	_, err := p.run(ctx, "set", strconv.Itoa(percent))
	return err
}

func (p program) Mute(ctx context.Context) error {
	_, err := p.run(ctx, "mute")
	return err
}

func (p program) Read(ctx context.Context) (percent, slack int, err error) {
	out, err := p.run(ctx, "read")
	if err != nil {
		return 0, 0, err
	}
	percent, err = strconv.Atoi(strings.TrimSpace(out))
	return percent, 0, err
}

// level is a program keeping its level in a file, 0 when muted.
const level = `
state="$dir/state"
[ -f "$state" ] || echo 30 > "$state"
case "$1" in
set) echo "$2" > "$state" ;;
mute) echo 0 > "$state" ;;
read) cat "$state" ;;
esac
`

func TestSpeakerReadsEverySetBack(t *testing.T) {
	ctx := context.Background()
	s := NewSpeaker("test:mixer", program{pulsetest.Fake(t, "mixer", level)})
	if err := s.SetVolume(ctx, 45); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Volume(ctx); err != nil || v != 45 {
		t.Errorf("Volume after SetVolume(45) = %d, %v", v, err)
	}
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Volume(ctx); err != nil || v != 0 {
		t.Errorf("Volume after Halt = %d, %v", v, err)
	}

	// A mixer that accepts a set but keeps its level, as a locked control does.
	stuck := NewSpeaker("test:stuck", program{pulsetest.Fake(t, "mixer", "echo 20\n")})
	if err := stuck.SetVolume(ctx, 80); err == nil || !strings.Contains(err.Error(), "test:stuck: set the volume to 80% but it reads back as 20%") {
		t.Errorf("SetVolume(80) = %v, want an error saying it reads back as 20%%", err)
	}
}

func TestHungProgramHonoursContext(t *testing.T) {
	cmd := pulsetest.Fake(t, "mixer", level)
	s := NewSpeaker("test:mixer", program{cmd})
	// sleep is a child of the script, not exec'd: killing the script
	// leaves it holding the output pipe, which must not hold up the call.
	if err := os.WriteFile(cmd, []byte("#!/bin/sh\nsleep 30\necho never\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := s.Volume(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Volume with a hung program = %v, want an error wrapping context.DeadlineExceeded", err)
	}
	// Far below the script's 30 s: the call gave up, it did not wait.
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Volume took %v to give up", d)
	}

	// A call waiting for its turn behind a hung one gives up when its own context ends, not
	// when the hung call's does.
	started := filepath.Join(t.TempDir(), "started")
	if err := os.WriteFile(cmd, []byte("#!/bin/sh\ntouch "+started+"\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	done := make(chan error, 1)
	go func() { done <- s.SetVolume(ctx2, 40) }()
	poll.Until(t, "start of the hung program", func() bool { _, err := os.Stat(started); return err == nil })
	ctx3, cancel3 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel3()
	start = time.Now()
	if _, err := s.Volume(ctx3); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Volume waiting behind a hung call = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the waiting call took %v: it waited for the hung one", d)
	}
	cancel2()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("SetVolume with a hung program = %v, want context.Canceled", err)
	}
}
