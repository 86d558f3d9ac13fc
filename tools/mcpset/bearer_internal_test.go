package mcpset

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The token goes to the MCP server's host only: a redirect to another host does not carry it.
func TestBearerStaysWithItsHost(t *testing.T) {
	got := make(chan string, 2)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "other: " + r.Header.Get("Authorization")
	}))
	defer other.Close()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "server: " + r.Header.Get("Authorization")
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer server.Close()
	c := bearerClient(&http.Client{}, "s3cret", server.URL+"/mcp")
	resp, err := c.Get(server.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a, b := <-got, <-got; a != "server: Bearer s3cret" || b != "other: " {
		t.Errorf("requests saw %q then %q; want the token at the server only", a, b)
	}
}
