//go:build unix

package config

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// noHang runs f, failing the test if it has not returned within 5s.
func noHang(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s still blocked after 5s", what)
		return nil
	}
}

// A config or token file that is a FIFO is refused at once, not waited on for a writer; one that
// is a symlink to /dev/zero is refused without reading it.
func TestSpecialFilesRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Whatever happens, nothing stays blocked on the FIFO once the test is over.
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, tc := range []struct {
		what string
		load func() error
		want string
	}{
		{"Load(FIFO)", func() error { _, err := Load(fifo); return err },
			"--config: " + fifo + " is a named pipe (FIFO), not a regular file"},
		{"Load(/dev/zero)", func() error { _, err := Load(zero); return err },
			"--config: " + zero + " (a symlink to /dev/zero) is a character device, not a regular file"},
		{"LoadToken(FIFO)", func() error {
			_, err := LoadToken(ServerConfig{TokenFile: fifo}, os.Getenv, slog.New(slog.DiscardHandler))
			return err
		}, "server.token_file: " + fifo + " is a named pipe (FIFO), not a regular file"},
		{"LoadToken(/dev/zero)", func() error {
			_, err := LoadToken(ServerConfig{TokenFile: zero}, os.Getenv, slog.New(slog.DiscardHandler))
			return err
		}, "server.token_file: " + zero + " (a symlink to /dev/zero) is a character device, not a regular file"},
	} {
		if err := noHang(t, tc.what, tc.load); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.what, err, tc.want)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("refusing the files allocated %d KiB", grew>>10)
	}
}
