package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int64{10, 11} {
		if b, err := ReadFile(small, max); err != nil || string(b) != "0123456789" {
			t.Errorf("ReadFile(max %d) = %q, %v; want the whole file", max, b, err)
		}
	}
	_, err := ReadFile(small, 9)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Path != small || tl.Max != 9 {
		t.Errorf("ReadFile(max 9) error %v, want a *TooLargeError for %s and 9", err, small)
	}
	if err == nil || !strings.Contains(err.Error(), small) || !strings.Contains(err.Error(), "9 bytes") {
		t.Errorf("error %q, want the path and the cap", err)
	}

	_, err = ReadFile(dir, 1<<20)
	var nr *NotRegularError
	if !errors.As(err, &nr) || !nr.Mode.IsDir() {
		t.Fatalf("ReadFile(a directory) error %v, want a *NotRegularError", err)
	}
	if want := dir + " is a directory, not a regular file"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) error %v, want fs.ErrNotExist", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 64 << 10: "64 KiB", 300: "300 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
