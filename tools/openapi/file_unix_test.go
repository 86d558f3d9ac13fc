//go:build unix

package openapi_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devicectl/devicectl/tools/openapi"
)

// A document path that names a FIFO is refused at once: opening it for reading would otherwise
// wait for a writer, and hang the daemon's start or reload with it.
func TestLoadFIFORefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.yaml")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := openapi.Load(context.Background(), path, &openapi.Options{BaseURL: "http://robot.local"})
		errc <- err
	}()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Load of a FIFO: %v, want an error saying it is not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load of a FIFO still blocked after 10s")
	}
}
