package stt

import (
	"os"
	"os/exec"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/flite"
)

// needPocketSphinx returns pocketsphinx_continuous's path, or skips (fails with
// DEVICECTL_REQUIRE_HW=1, as CI sets where pocketsphinx, flite and sox are installed).
func needPocketSphinx(t *testing.T) string {
	t.Helper()
	for _, prog := range []string{PocketSphinx, "flite", "sox"} {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("DEVICECTL_REQUIRE_HW") == "1" {
				t.Fatalf("%s is not installed (apt-get install pocketsphinx pocketsphinx-en-us flite sox)", prog)
			}
			t.Skipf("%s is not installed", prog)
		}
	}
	p, _ := exec.LookPath(PocketSphinx)
	return p
}

// speak has flite say text in voice, as a 16 kHz mono WAV with a little silence around it, as a
// voice activity detector cuts an utterance.
func speak(t *testing.T, voice, text string) string {
	t.Helper()
	return flite.Say(t, flite.Speech{Text: text, Voice: voice, Lead: 0.2, Trail: 0.3})
}
