//go:build linux

package proc

import (
	"os"
	"runtime"
	"strconv"
	"testing"
)

// The resident set grows by the pages the test touches, and another process's is read by pid.
func TestRSS(t *testing.T) {
	before := RSS(t, "self")
	const size = 64 << 20
	b := make([]byte, size)
	for i := 0; i < size; i += os.Getpagesize() {
		b[i] = 1
	}
	if after := RSS(t, "self"); after-before < size*9/10 {
		t.Errorf("RSS went from %d to %d bytes after touching %d; want it %d more", before, after, size, size)
	}
	if r := RSS(t, strconv.Itoa(os.Getpid())); r < size {
		t.Errorf("RSS by pid = %d; want at least the %d touched", r, size)
	}
	runtime.KeepAlive(b)
}
