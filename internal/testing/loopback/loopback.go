// Package loopback serves a server on a loopback port of its own for the length of a test, and
// checks that it closes cleanly.
package loopback

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
)

// Server is what Serve runs: an *http.Server, agent/server's Server, or any with the same two methods.
type Server interface {
	Serve(net.Listener) error
	Close() error
}

// Serve serves s on 127.0.0.1, on a port of its own, and returns the address and a stop that
// closes s and waits for Serve to return. Stop runs at the test's end too; the test fails if
// closing reports an error (http.ErrServerClosed, the normal end of an http.Server, is none).
func Serve(t testing.TB, s Server) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			closeErr, serveErr := s.Close(), <-served
			if errors.Is(serveErr, http.ErrServerClosed) {
				serveErr = nil
			}
			if err := errors.Join(closeErr, serveErr); err != nil {
				t.Errorf("closing the server at %s: %v", ln.Addr(), err)
			}
		})
	}
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}
