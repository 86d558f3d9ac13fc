//go:build linux

package speech

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/poll"
	"github.com/devicectl/devicectl/internal/testing/proc"
)

var _ hal.Resource = (*Speaker)(nil)

func TestSpeakInOrder(t *testing.T) {
	s, log := synthSpeaker(t)
	var want []string
	for i := range 20 {
		text := fmt.Sprintf("utterance %d", i)
		s.Speak(text)
		want = append(want, "begin "+text, "end "+text)
	}
	s.Speak("  \n") // blank: no process at all
	waitIdle(t, s)
	if d := diff(lines(t, log), want); d != "" {
		t.Error(d)
	}
}

func TestSpeakNeverBlocksAndDropsOldest(t *testing.T) {
	cmd, log := fakeSynth(t)
	rec := &recorder{}
	s := newSpeaker(t, &Options{Command: cmd, QueueSize: 3, Logger: slog.New(rec)})
	s.Speak("hold first")
	waitLine(t, log, "begin hold first")

	// The command is stuck until released, so a Speak that waited for it would never return.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			s.Speak(fmt.Sprintf("n%d", i))
		}
	}()
	waitClosed(t, "100 Speak calls while the command runs", done)

	release(t, log)
	waitIdle(t, s)
	want := []string{"begin hold first", "end hold first", "begin n97", "end n97", "begin n98", "end n98", "begin n99", "end n99"}
	if d := diff(lines(t, log), want); d != "" {
		t.Error(d)
	}
	var drops int
	for _, r := range rec.at(slog.LevelWarn) {
		if strings.Contains(r, "queue full") {
			drops++
		}
	}
	if drops != 97 {
		t.Errorf("logged %d drops, want 97", drops)
	}
}

func TestInterruptKillsOldAndSpeaksNew(t *testing.T) {
	s, log := synthSpeaker(t)
	s.Speak("hold old reply")
	s.Speak("queued old reply")
	waitLine(t, log, "begin hold old reply")
	s.Interrupt()
	s.Speak("new reply")
	// The old utterance is never released: Wait can only return if it was killed.
	waitIdle(t, s)
	want := []string{"begin hold old reply", "begin new reply", "end new reply"}
	if d := diff(lines(t, log), want); d != "" {
		t.Error(d)
	}
}

// A wrapper script's children (aplay in "piper | aplay") must die with it, or audio plays on.
func TestInterruptKillsProcessGroup(t *testing.T) {
	s, log := synthSpeaker(t)
	s.Speak("child")
	var pid int
	poll.Until(t, "the grandchild to start", func() bool {
		b, err := os.ReadFile(log + ".child")
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	s.Interrupt()
	waitIdle(t, s)
	proc.WaitGone(t, "the grandchild", pid)
}

func TestHaltSilencesAndStaysUsable(t *testing.T) {
	s, log := synthSpeaker(t)
	s.Speak("hold on")
	s.Speak("queued")
	waitLine(t, log, "begin hold on")
	pid := scriptPID(t, log)
	if err := s.Halt(); err != nil {
		t.Fatal(err)
	}
	if !reaped(pid) {
		t.Errorf("command %d not waited for when Halt returned", pid)
	}
	s.Speak("after halt")
	waitIdle(t, s)
	want := []string{"begin hold on", "begin after halt", "end after halt"}
	if d := diff(lines(t, log), want); d != "" {
		t.Error(d)
	}
}

func TestCloseStopsSpeakingAndGoroutines(t *testing.T) {
	leakcheck.Check(t) // the Speaker's goroutine, and exec's, must be gone after Close
	cmd, log := fakeSynth(t)
	s, err := NewSpeaker(&Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	s.Speak("hold forever")
	s.Speak("never said")
	waitLine(t, log, "begin hold forever")
	pid := scriptPID(t, log)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		s.Close()
		s.Close() // idempotent
	}()
	waitClosed(t, "Close to return", closed)
	if !reaped(pid) {
		t.Errorf("command %d not waited for when Close returned", pid)
	}
	s.Speak("too late")
	waitIdle(t, s)
	if d := diff(lines(t, log), []string{"begin hold forever"}); d != "" {
		t.Error(d)
	}
}

func TestCommandFailureIsLoggedNotFatal(t *testing.T) {
	cmd, log := fakeSynth(t)
	rec := &recorder{}
	s := newSpeaker(t, &Options{Command: cmd, Logger: slog.New(rec)})
	s.Speak("fail now")
	s.Speak("fine after")
	waitIdle(t, s)
	want := []string{"begin fail now", "begin fine after", "end fine after"}
	if d := diff(lines(t, log), want); d != "" {
		t.Error(d)
	}
	warns := rec.at(slog.LevelWarn)
	if len(warns) != 1 || !strings.Contains(warns[0], "synth exploded") || !strings.Contains(warns[0], "exit status 3") {
		t.Errorf("warnings = %q, want one naming the exit status and stderr", warns)
	}
}

func TestMissingProgramFailsAtStart(t *testing.T) {
	_, err := NewSpeaker(&Options{Command: []string{"devicectl-no-such-tts", "--voice", "x"}})
	if !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "devicectl-no-such-tts") {
		t.Errorf("NewSpeaker = %v, want an error naming the program and wrapping exec.ErrNotFound", err)
	}
	if _, err := NewSpeaker(&Options{Command: []string{""}}); err == nil {
		t.Error("NewSpeaker with an empty program name succeeded")
	}
}

func TestDefaultCommandWithoutEspeak(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for name, f := range map[string]func() error{
		"DefaultCommand": func() error { _, err := DefaultCommand("en"); return err },
		"NewSpeaker":     func() error { _, err := NewSpeaker(nil); return err },
	} {
		err := f()
		if !errors.Is(err, exec.ErrNotFound) ||
			!strings.Contains(err.Error(), "apt-get install espeak-ng") ||
			!strings.Contains(err.Error(), "hardware.speech.command") {
			t.Errorf("%s = %v, want advice to install espeak-ng or configure hardware.speech.command", name, err)
		}
	}
}

func TestOptionsAreCopied(t *testing.T) {
	cmd, log := fakeSynth(t)
	opts := &Options{Command: cmd}
	s := newSpeaker(t, opts)
	opts.Command[1] = log + ".elsewhere"
	if opts.QueueSize != 0 || opts.Logger != nil {
		t.Errorf("NewSpeaker filled in the caller's options: %+v", opts)
	}
	s.Speak("hello")
	waitIdle(t, s)
	if d := diff(lines(t, log), []string{"begin hello", "end hello"}); d != "" {
		t.Error(d)
	}
}

// scriptPID returns the pid of the fake synthesizer that last started.
func scriptPID(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log + ".pid")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// reaped reports whether our child pid has exited and been waited for.
func reaped(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return os.IsNotExist(err)
}

// Through a real Speaker: a reply is said once, and the next reply cuts the one still playing.
func TestNarratorWithSpeaker(t *testing.T) {
	for _, sentences := range []bool{false, true} {
		t.Run(fmt.Sprintf("sentences=%v", sentences), func(t *testing.T) {
			s, log := synthSpeaker(t)
			n := NewNarrator(s, &Options{Sentences: sentences})

			n.Observe(chunk("Hello "))
			n.Observe(chunk("there."))
			n.Observe(final("Hello there."))
			waitIdle(t, s)

			n.Observe(chunk("Please hold the line."))
			n.Observe(final(""))
			poll.Until(t, "the second reply to start", func() bool {
				return strings.Contains(strings.Join(lines(t, log), "\n"), "begin Please hold")
			})
			n.Observe(thought("user spoke again"))
			n.Observe(chunk("Third reply."))
			n.Observe(final("Third reply."))
			waitIdle(t, s)

			want := []string{
				"begin Hello there.", "end Hello there.",
				"begin Please hold the line.",
				"begin Third reply.", "end Third reply.",
			}
			if d := diff(lines(t, log), want); d != "" {
				t.Error(d)
			}
		})
	}
}
