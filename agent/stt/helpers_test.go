package stt

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
func speak(t *testing.T, dir, voice, text string) string {
	t.Helper()
	raw := filepath.Join(dir, voice+"-raw.wav")
	if out, err := exec.Command("flite", "-voice", voice, "-t", text, "-o", raw).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v\n%s", err, out)
	}
	out := filepath.Join(dir, voice+".wav")
	if b, err := exec.Command("sox", raw, "-r", "16000", "-c", "1", "-b", "16", out, "pad", "0.2", "0.3").CombinedOutput(); err != nil {
		t.Fatalf("sox: %v\n%s", err, b)
	}
	return out
}
