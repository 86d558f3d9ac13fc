package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// A config path that is a directory, or a file past MaxFileSize, is refused with an error naming
// the file and what is wrong with it.
func TestLoadRefusesWhatIsNoConfig(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", MaxFileSize)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, "--config: " + dir + " is a directory, not a regular file"},
		{big, "--config: " + big + " is larger than 1 MiB, the most read from such a file"},
	} {
		_, err := Load(tc.path)
		var ce *Error
		if !errors.As(err, &ce) || err.Error() != tc.want {
			t.Errorf("Load(%s): %v, want a *Error %q", tc.path, err, tc.want)
		}
	}
}

// aliasBomb is a small document whose toolsets.opentool list holds one tool set of width
// functions and count aliases of it: the config walk would copy width*count function names.
func aliasBomb(width, count int) string {
	var b strings.Builder
	b.WriteString("toolsets:\n  opentool:\n    - &set {url: http://127.0.0.1:9/, functions: [")
	for i := range width {
		fmt.Fprintf(&b, "f%d, ", i)
	}
	b.WriteString("f]}\n")
	for range count {
		b.WriteString("    - *set\n")
	}
	return b.String()
}

// An alias bomb in list items is refused before anything is decoded, fast and without the
// memory its expansion would take, with an error naming the file and the alias.
func TestLoadRefusesAliasBomb(t *testing.T) {
	doc := aliasBomb(3000, 3000) // 45 KB that stand for 9 million function names
	path := filepath.Join(t.TempDir(), "bomb.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := Load(path)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	want := path + ": line 4: aliases (*set and those after it) expand the document by more than 10000 nodes"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Load of a %d-byte alias bomb: %v, want an error starting %q", len(doc), err, want)
	}
	if took > 2*time.Second {
		t.Errorf("refusing took %v", took)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("refusing allocated %d MiB", grew>>20)
	}
}

// Aliases a real config uses (a repeated block) stay well within the budget; so does a small
// nest of them.
func TestAliasesWithinBudget(t *testing.T) {
	doc := `toolsets:
  opentool:
    - url: http://192.168.1.20:9627
      functions: &fn [turn_on, turn_off]
      sub_types: &st {turn_on: control}
    - url: http://192.168.1.21:9627
      functions: *fn
      sub_types: *st
connection:
  ping_interval: &t 3s
  ping_timeout: *t
`
	c := Defaults()
	if err := Parse([]byte(doc), c); err != nil {
		t.Fatal(err)
	}
	if got := c.ToolSets.OpenTool[1].Functions; len(got) != 2 {
		t.Errorf("functions through the alias: %q", got)
	}
	var n yaml.Node
	// 10 aliases of a set of 7 functions add 10*(5+7-1) = 110 nodes.
	if err := yaml.Unmarshal([]byte(aliasBomb(6, 10)), &n); err != nil {
		t.Fatal(err)
	}
	if err := checkAliases(&n, 110); err != nil {
		t.Errorf("budget 110: %v", err)
	}
	if err := checkAliases(&n, 109); err == nil {
		t.Errorf("budget 109: no error for 110 nodes")
	}
}

// A token no header can carry, or a token file that is not one token, is refused naming the file
// (or the variable) and the problem; the token itself is not shown.
func TestLoadTokenBadContent(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nul := write("nul", "abc\x00def\n")
	esc := write("esc", "abc\x1bdef")
	two := write("two", "abc\ndef\n")
	big := write("big", strings.Repeat("t", MaxSecretSize+1))
	for _, tc := range []struct {
		file, env, want string
	}{
		{file: nul, want: "server.token_file: " + nul + " line 1: byte 4 is 0x00, which no HTTP header may carry"},
		{file: esc, want: "server.token_file: " + esc + " line 1: byte 4 is 0x1b, which no HTTP header may carry"},
		{file: two, want: "server.token_file: " + two + " holds more than one line; want the token alone"},
		{file: big, want: "server.token_file: " + big + " is larger than 64 KiB, the most read from such a file"},
		{file: dir, want: "server.token_file: " + dir + " is a directory, not a regular file"},
		{env: "abc\ndef", want: "$DEVICECTL_TOKEN: byte 4 is 0x0a, which no HTTP header may carry"},
	} {
		getenv := func(k string) string {
			if k == TokenEnv {
				return tc.env
			}
			return ""
		}
		got, err := LoadToken(ServerConfig{TokenFile: tc.file}, getenv, slog.New(slog.DiscardHandler))
		var ce *Error
		if !errors.As(err, &ce) || err.Error() != tc.want {
			t.Errorf("LoadToken(%q, $%s=%q) = %q, %v; want a *Error %q", tc.file, TokenEnv, tc.env, got, err, tc.want)
		}
	}
	// A file of keys may hold several lines; each is checked.
	keys := write("keys", "# clients\nk1\r\nk2\x07\n")
	if _, err := ReadSecret("opentool.api_keys_file", keys, slog.New(slog.DiscardHandler)); err == nil ||
		err.Error() != "opentool.api_keys_file: "+keys+" line 3: byte 3 is 0x07, which no HTTP header may carry" {
		t.Errorf("ReadSecret of a key file with a BEL: %v", err)
	}
}
