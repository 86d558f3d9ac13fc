package loopback

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// An http.Server is served until stop, which leaves the port closed and is no failure.
func TestServeHTTP(t *testing.T) {
	addr, stop := Serve(t, &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hello")
	})})
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" {
		t.Errorf("got %q, want hello", b)
	}
	stop()
	stop() // again, as the cleanup does
	if _, err := http.Get("http://" + addr + "/"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("after stop: %v, want the connection refused", err)
	}
}
