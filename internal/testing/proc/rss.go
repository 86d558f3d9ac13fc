package proc

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// RSS is the resident set of the process pid ("self" for the test's own) in bytes, VmRSS of
// /proc/PID/status; it fails t where there is none (no such process, no /proc).
func RSS(t testing.TB, pid string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%s/status: VmRSS %q", pid, rest)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%s/status", pid)
	return 0
}
