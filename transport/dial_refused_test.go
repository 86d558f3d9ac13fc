package transport

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
)

// A refused connect is one clear line: the ws:// URL once, and why. (It used to name the URL three
// times, once as http://, through coder/websocket's and net/http's wrapping.)
func TestDialRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the connect is refused
	url := "ws://" + addr + "/device"
	_, err = Dial(t.Context(), url, nil)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Dial to a closed port: %v, want connection refused", err)
	}
	want := "connecting to " + url + ": dial tcp " + addr + ": connect: connection refused"
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if n := strings.Count(err.Error(), addr); n != 2 || strings.Contains(err.Error(), "http://") {
		t.Errorf("error %q names the address %d times (want the URL and the TCP dial) or as http://", err, n)
	}
}
