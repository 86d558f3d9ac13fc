package doctor

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	// The drivers devicectl registers: Hardware opens what the registry holds.
	_ "github.com/devicectl/devicectl/hal/drivers"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/shscript"
)

// rows writes results as "name STATE" pairs, as the table would show them.
func rows(results []Result) string {
	var out []string
	for _, r := range results {
		state := "OK"
		switch {
		case r.Err != nil:
			state = "FAIL"
		case r.Warn != "":
			state = "WARN"
		}
		out = append(out, r.Name+" "+state)
	}
	return strings.Join(out, ", ")
}

// Hardware opens the parts the config names through their drivers, and a part that fails carries
// its driver's remedy.
func TestHardware(t *testing.T) {
	leakcheck.Check(t)
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()

	h := config.Defaults().Hardware
	h.Mode = "sim"
	if got := Hardware(t.Context(), h, "en", log); rows(got) != "hardware OK" || !strings.Contains(got[0].Detail, "all simulated") {
		t.Errorf("hardware.mode sim: %+v", got)
	}

	h = config.Defaults().Hardware // the sim drivers, no speech, no microphone
	got := Hardware(t.Context(), h, "en", log)
	if rows(got) != "speaker OK, face OK, speech OK" || !strings.HasSuffix(got[1].Detail, "showing idle") || !strings.HasPrefix(got[2].Detail, "off") {
		t.Errorf("the sim drivers: %+v", got)
	}

	h.Face.Driver, h.Face.Command = "command", []string{shscript.Write(t, dir, "show-face", "exit 0\n")}
	h.Microphone = config.MicrophoneConfig{Driver: "file", File: filepath.Join(dir, "missing.wav")}
	got = Hardware(t.Context(), h, "en", log)
	if rows(got) != "speaker OK, face OK, speech OK, microphone FAIL" || !strings.Contains(got[3].Remedy, "hardware.microphone") {
		t.Errorf("a face program and a missing microphone file: %+v", got)
	}

	h.Face.Command = []string{filepath.Join(dir, "no-such-program")}
	h.Microphone.Driver = config.MicrophoneOff
	got = Hardware(t.Context(), h, "en", log)
	if rows(got) != "speaker OK, face FAIL, speech OK" || got[1].Remedy != "is hardware.face.command's program installed and executable by the service user?" {
		t.Errorf("a face program that is not there: %+v", got)
	}
	h.Face.Optional = true
	if got = Hardware(t.Context(), h, "en", log); rows(got) != "speaker OK, face WARN, speech OK" || !strings.Contains(got[1].Warn, "run starts without set_virtual_human_expression") {
		t.Errorf("an optional face that is not there: %+v", got)
	}
}
