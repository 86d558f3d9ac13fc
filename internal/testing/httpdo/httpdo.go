// Package httpdo makes one HTTP request for a test and hands back the status and the whole body,
// so that a test reads as the request it makes and the answer it expects.
package httpdo

import (
	"io"
	"net/http"
	"testing"
)

// Do sends req with http.DefaultClient and returns the status code and the body read to its end.
// A request that fails, or a body that breaks off, fails t.
func Do(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return resp.StatusCode, string(b)
}

// Get is Do of a GET of url.
func Get(t testing.TB, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, req)
}
