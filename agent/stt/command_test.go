package stt

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/internal/wav"
	"github.com/devicectl/devicectl/tools"
)

func TestCommandStdinAndFile(t *testing.T) {
	a := Audio{Samples: make([]int16, 16000), Rate: 16000}
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		// The WAV on stdin: its size is the header and two bytes a sample.
		{"stdin", []string{"sh", "-c", "wc -c"}, "32044"},
		{"file", []string{"sh", "-c", `head -c 4 "$1"; echo; wc -c < "$1"`, "sh", ArgWAV}, "RIFF 32044"},
		{"lines joined", []string{"sh", "-c", "cat >/dev/null; printf 'set the\\n  volume  \\n'"}, "set the volume"},
		{"nothing heard", []string{"sh", "-c", "cat >/dev/null"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCommand(&CommandOptions{Argv: tc.argv})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Transcribe(context.Background(), a)
			if err != nil || got != tc.want {
				t.Errorf("Transcribe = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestCommandGrammarFile(t *testing.T) {
	var decls []tools.Declaration
	json.Unmarshal([]byte(`[{"name":"amplify_volume","description":"v","main_type":"remote","sub_type":"control","parameters":{"type":"object"}}]`), &decls)
	c, err := NewCommand(&CommandOptions{Argv: []string{"sh", "-c", `cat >/dev/null; grep -c "volume to <number>" "$1"`, "sh", ArgJSGF}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Transcribe(context.Background(), Audio{Samples: make([]int16, 10), Rate: 16000, Tools: decls})
	if err != nil || got != "2" {
		t.Errorf("the grammar file given to the program: %q, %v; want 2 volume phrases in it", got, err)
	}
}

func TestCommandErrors(t *testing.T) {
	a := Audio{Samples: make([]int16, 100), Rate: 16000}
	c, err := NewCommand(&CommandOptions{Argv: []string{"sh", "-c", "cat >/dev/null; echo starting >&2; echo 'model not found' >&2; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Transcribe(context.Background(), a)
	for _, want := range []string{"command sh", "agent.stt.command", "exit status 3", "model not found"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want it to say %q", err, want)
		}
	}

	c, _ = NewCommand(&CommandOptions{Argv: []string{"sh", "-c", "cat >/dev/null; yes"}, MaxOutput: 1000})
	if _, err := c.Transcribe(context.Background(), a); err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Errorf("a program that prints forever: %v", err)
	}

	c, _ = NewCommand(&CommandOptions{Argv: []string{"sleep", "60"}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Transcribe(ctx, a); err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("a program past the deadline: %v after %v", err, time.Since(start))
	}

	for _, argv := range [][]string{nil, {""}, {"devicectl-no-such-program"}} {
		if _, err := NewCommand(&CommandOptions{Argv: argv, Key: "agent.stt.command"}); err == nil || !strings.Contains(err.Error(), "agent.stt.command") {
			t.Errorf("NewCommand(%q) = %v; want an error naming agent.stt.command", argv, err)
		}
	}
}

func TestDictionary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.dict")
	os.WriteFile(path, []byte("smile S M AY L\ncry K R AY\ncry(2) K R AY\n"), 0o600)
	d := &Dictionary{Path: path}
	for w, want := range map[string]bool{"smile": true, "cry": true, "cr": false, "wink": false} {
		if got := d.Has(w); got != want {
			t.Errorf("Has(%q) = %v", w, got)
		}
	}
	var decls []tools.Declaration
	json.Unmarshal([]byte(`[{"name":"set_virtual_human_expression","description":"f","main_type":"remote","sub_type":"control",
		"parameters":{"type":"object","properties":{"expression":{"type":"string","enum":["smile","wink"]}}}}]`), &decls)
	g := string(GrammarKnown(decls, d.Has))
	if !strings.Contains(g, "smile") || strings.Contains(g, "wink") {
		t.Errorf("a word the dictionary lacks stays in the grammar:\n%s", g)
	}
}

// TestPocketSphinx decodes flite's speech with the packaged default and the grammar: exactly.
func TestPocketSphinx(t *testing.T) {
	needPocketSphinx(t)
	c, err := NewPocketSphinx()
	if err != nil {
		t.Fatal(err)
	}
	decls := loadTools(t)
	for _, tc := range []struct{ voice, text string }{
		{"slt", "set the volume to thirty"},
		{"rms", "look amazed"},
		{"slt", "add five and ten"},
	} {
		f, err := os.Open(speak(t, tc.voice, tc.text))
		if err != nil {
			t.Fatal(err)
		}
		r, err := wav.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		samples, err := r.ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, err := c.Transcribe(context.Background(), Audio{Samples: samples, Rate: r.Rate, Tools: decls})
		if err != nil || got != tc.text {
			t.Errorf("%s saying %q: heard %q, %v", tc.voice, tc.text, got, err)
		}
		t.Logf("%s %q: %v", tc.voice, tc.text, time.Since(start))
	}
}
