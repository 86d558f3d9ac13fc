package protocol

import (
	"regexp"
	"strings"
	"testing"
)

// ValidToolName is ToolNamePattern without a regexp: both must say the same of every name.
func TestValidToolName(t *testing.T) {
	re := regexp.MustCompile(ToolNamePattern)
	for _, name := range []string{
		"", "a", "amplify_volume", "get-device-status", "A_b-9", strings.Repeat("x", 64),
		strings.Repeat("x", 65), "with space", "dot.name", "slash/name", "音量", "tab\t", "a\n",
		"__", "-", "ünïcode", "name\x00",
	} {
		if got, want := ValidToolName(name), re.MatchString(name); got != want {
			t.Errorf("ValidToolName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
}

func FuzzValidToolName(f *testing.F) {
	re := regexp.MustCompile(ToolNamePattern)
	f.Add("amplify_volume")
	f.Add(strings.Repeat("y", 64))
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidToolName(name), re.MatchString(name); got != want {
			t.Errorf("ValidToolName(%q) = %v, the pattern says %v", name, got, want)
		}
	})
}
