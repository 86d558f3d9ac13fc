package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// serve's token goes to serve's host only: a redirect to another host does not carry it.
func TestBearerTransportStaysWithItsHost(t *testing.T) {
	got := make(chan string, 2)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "other: " + r.Header.Get("Authorization")
	}))
	defer other.Close()
	serve := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "serve: " + r.Header.Get("Authorization")
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer serve.Close()
	c := &http.Client{Transport: bearerTransport{token: "s3cret", host: endpointHost(serve.URL + "/mcp")}}
	resp, err := c.Get(serve.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a, b := <-got, <-got; a != "serve: Bearer s3cret" || b != "other: " {
		t.Errorf("requests saw %q then %q; want the token at serve only", a, b)
	}
}
