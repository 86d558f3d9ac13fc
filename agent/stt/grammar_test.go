package stt

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func loadTools(t *testing.T) []tools.Declaration {
	t.Helper()
	raw, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var decls []tools.Declaration
	if err := json.Unmarshal(raw, &decls); err != nil {
		t.Fatal(err)
	}
	return decls
}

func TestGrammarGolden(t *testing.T) {
	got := Grammar(loadTools(t))
	golden := filepath.Join("testdata", "commands.gram")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Grammar differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

// TestGrammarFollowsTools: a tool the device lacks is not listened for, and its enum is read from
// the schema the device declared.
func TestGrammarFollowsTools(t *testing.T) {
	all := loadTools(t)
	volumeOnly := Grammar(all[:1])
	for _, absent := range []string{"<face>", "<status>", "louder", "<calculate>", "<memory>", "<remind>"} {
		if bytes.Contains(volumeOnly, []byte(absent)) {
			t.Errorf("a grammar for amplify_volume alone holds %q:\n%s", absent, volumeOnly)
		}
	}
	for _, present := range []string{"<volume>", "<number>", "<chat>", "thirty"} {
		if !bytes.Contains(volumeOnly, []byte(present)) {
			t.Errorf("a grammar for amplify_volume lacks %q:\n%s", present, volumeOnly)
		}
	}
	face := Grammar(all[1:2])
	if !bytes.Contains(face, []byte("squint")) || !bytes.Contains(face, []byte("look amazed")) {
		t.Errorf("the face enum's expressions are missing:\n%s", face)
	}
	if bytes.Contains(face, []byte("wink")) || bytes.Contains(face, []byte("2")) {
		t.Errorf("an enum value with a digit went into the grammar (pocketsphinx refuses it whole):\n%s", face)
	}
	if !bytes.Equal(Grammar(all), Grammar(all)) {
		t.Error("Grammar is not deterministic")
	}
}

// TestGrammarPocketSphinx has pocketsphinx itself load the grammar: it refuses one that is not
// JSGF or holds a word its dictionary lacks, and prints nothing.
func TestGrammarPocketSphinx(t *testing.T) {
	ps := needPocketSphinx(t)
	dir := t.TempDir()
	gram := filepath.Join(dir, "g.gram")
	if err := os.WriteFile(gram, Grammar(loadTools(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	wavPath := speak(t, "slt", "set the volume to thirty")
	out, err := exec.Command(ps, "-infile", wavPath, "-jsgf", gram).CombinedOutput()
	if err != nil {
		t.Fatalf("pocketsphinx refused the grammar: %v\n%s", err, tail(out))
	}
	for _, bad := range []string{"is missing in the dictionary", "Failed to", "syntax error"} {
		if bytes.Contains(out, []byte(bad)) {
			t.Errorf("pocketsphinx says %q of the grammar:\n%s", bad, tail(out))
		}
	}
	// A bad grammar is refused: so the check above can fail.
	if err := os.WriteFile(gram, []byte("#JSGF V1.0;\ngrammar x;\npublic <a> = set the volume to <missing>;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(ps, "-infile", wavPath, "-jsgf", gram).CombinedOutput(); err == nil && !bytes.Contains(out, []byte("ERROR")) {
		t.Errorf("pocketsphinx took a grammar with an undefined rule:\n%s", tail(out))
	}
}

func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}
