package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/buildfeatures"
)

// completions asks devicectl what the shell should offer for the command line args ends with,
// as the completion scripts do (cobra's __complete), and returns the values without descriptions.
func completions(t *testing.T, args ...string) []string {
	t.Helper()
	r := runCLI(t.Context(), "", append([]string{"__complete"}, args...)...)
	if r.code != exitOK {
		t.Fatalf("__complete %q: exit %d, %s", args, r.code, r.stderr)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if strings.HasPrefix(line, ":") {
			break // the directive ends the list
		}
		name, _, _ := strings.Cut(line, "\t")
		out = append(out, name)
	}
	return out
}

func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--log-level", ""}, []string{"debug", "info", "warn", "error"}},
		{[]string{"run", "--log-format", ""}, []string{"auto", "human", "text", "json"}},
		{[]string{"tools", "--hardware", ""}, []string{"config", "sim"}},
		{[]string{"run", "--language", ""}, []string{"zh", "en"}},
		{[]string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}},
	} {
		if got := completions(t, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("devicectl %s<TAB>: %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
	if !buildfeatures.HasSim {
		return // call is a stand-in
	}
	want := []string{"amplify_volume", "set_virtual_human_expression", "get_device_status"}
	if got := completions(t, "call", ""); !slices.Equal(got, want) {
		t.Errorf("devicectl call <TAB>: %q, want the device's tools %q", got, want)
	}
	r := runCLI(t.Context(), "", "__complete", "call", "--language", "en", "")
	if !strings.Contains(r.stdout, "amplify_volume\tSet the device's speaker volume.\n") {
		t.Errorf("call's tools in English, with the first sentence of each description:\n%s", r.stdout)
	}
	if got := completions(t, "call", "amplify_volume", ""); len(got) != 0 {
		t.Errorf("devicectl call TOOL <TAB>: %q, want nothing (the JSON is the user's)", got)
	}
}

// A shell cobra has no script for is an error, not the help with exit 0.
func TestCompletionUnsupportedShell(t *testing.T) {
	r := runCLI(t.Context(), "", "completion", "tcsh")
	want := `devicectl: unsupported shell "tcsh": devicectl completion writes scripts for bash, zsh, fish, powershell`
	if r.code != exitUsage || strings.TrimSpace(r.stderr) != want || r.stdout != "" {
		t.Errorf("completion tcsh: exit %d, stdout %q, stderr %q; want exit 2 and %q", r.code, r.stdout, r.stderr, want)
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if r := runCLI(t.Context(), "", "completion", shell); r.code != exitOK || !strings.Contains(r.stdout, "devicectl") {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, r.code, len(r.stdout), r.stderr)
		}
	}
	if r := runCLI(t.Context(), "", "completion"); r.code != exitOK || !strings.Contains(r.stdout, "bash") {
		t.Errorf("completion alone: exit %d, want its help: %q", r.code, r.stdout)
	}
}
