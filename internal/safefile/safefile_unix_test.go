//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// A FIFO with no writer is refused at once: a plain open would wait for a writer for ever.
func TestOpenFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "config.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo, 1<<20); done <- err }()
	select {
	case err := <-done:
		if want := fifo + " is a named pipe (FIFO), not a regular file"; err == nil || err.Error() != want {
			t.Errorf("error %v, want %q", err, want)
		}
	case <-time.After(5 * time.Second):
		// The goroutine stays blocked in open; a writer releases it.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("ReadFile of a FIFO still blocked after 5s")
	}
}

// A symlink to /dev/zero is refused before anything is read, and the error says where it points.
func TestOpenDevZero(t *testing.T) {
	link := filepath.Join(t.TempDir(), "token")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFile(link, 1<<30)
	runtime.ReadMemStats(&after)
	var nr *NotRegularError
	if !errors.As(err, &nr) || nr.Target != "/dev/zero" {
		t.Fatalf("error %v, want a *NotRegularError naming /dev/zero", err)
	}
	if want := link + " (a symlink to /dev/zero) is a character device, not a regular file"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing /dev/zero allocated %d bytes", grew)
	}
}

// /dev/null, through a symlink too, is an empty file.
func TestDevNullIsEmpty(t *testing.T) {
	link := filepath.Join(t.TempDir(), "empty")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{os.DevNull, link} {
		if b, err := ReadFile(path, 10); err != nil || len(b) != 0 {
			t.Errorf("ReadFile(%s) = %q, %v; want nothing", path, b, err)
		}
	}
}
