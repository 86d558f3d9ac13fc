//go:build linux

package speech

import (
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/pulsetest"
)

// wavSeconds asks sox how long a WAV file plays.
func wavSeconds(t *testing.T, wav string) float64 {
	t.Helper()
	out, err := exec.Command("soxi", "-D", wav).CombinedOutput()
	if err != nil {
		t.Fatalf("soxi -D %s: %v: %s", wav, err, out)
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatalf("soxi -D %s: %v", wav, err)
	}
	return d
}

// speakToWAV speaks text through a Speaker running command (which must write wav) and returns
// the WAV's duration.
func speakToWAV(t *testing.T, command []string, wav, text string) float64 {
	t.Helper()
	rec := &recorder{}
	s := newSpeaker(t, &Options{Command: command, Logger: slog.New(rec)})
	s.Speak(text)
	waitIdle(t, s)
	if w := rec.at(slog.LevelWarn); len(w) > 0 {
		t.Errorf("warnings: %q", w)
	}
	return wavSeconds(t, wav)
}

func TestEspeakThroughSpeaker(t *testing.T) {
	pulsetest.Need(t, "espeak-ng", "espeak-ng")
	pulsetest.Need(t, "soxi", "sox")
	wav := filepath.Join(t.TempDir(), "out.wav")
	// No text argument: espeak-ng must take the text from the Speaker's stdin.
	if d := speakToWAV(t, []string{"espeak-ng", "-w", wav}, wav, "Hello from devicectl."); d <= 0 {
		t.Errorf("WAV lasts %vs, want > 0", d)
	}
}

// The voices DefaultCommand picks must exist in the installed espeak-ng: an unknown voice makes
// espeak-ng exit 1 without writing the WAV.
func TestDefaultCommandVoices(t *testing.T) {
	pulsetest.Need(t, "espeak-ng", "espeak-ng")
	pulsetest.Need(t, "soxi", "sox")
	for _, tc := range []struct{ lang, voice, text string }{
		{"en", "en", "The volume is now fifty percent."},
		{"", "en", "Hello."},
		{"zh", "cmn", "你好，我是你的机器人。"},
		{"zh-CN", "cmn", "今天天气很好。"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			argv, err := DefaultCommand(tc.lang)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"espeak-ng", "-v", tc.voice}; !slices.Equal(argv, want) {
				t.Fatalf("DefaultCommand(%q) = %q, want %q", tc.lang, argv, want)
			}
			wav := filepath.Join(t.TempDir(), "out.wav")
			if d := speakToWAV(t, append(argv, "-w", wav), wav, tc.text); d <= 0 {
				t.Errorf("WAV lasts %vs, want > 0", d)
			}
		})
	}
}

func TestDefaultCommandUnknownLanguage(t *testing.T) {
	_, err := DefaultCommand("fr")
	if err == nil || !strings.Contains(err.Error(), `"fr"`) || !strings.Contains(err.Error(), "hardware.speech.command") {
		t.Errorf("DefaultCommand(fr) = %v, want an error naming the language and the config key", err)
	}
}
