package bearer_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/devicectl/devicectl/internal/bearer"
)

// The token goes to its host only: a redirect to another host does not carry it.
func TestTransportStaysWithItsHost(t *testing.T) {
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
	c := &http.Client{Transport: bearer.For(server.URL+"/mcp", "s3cret", nil)}
	resp, err := c.Get(server.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a, b := <-got, <-got; a != "server: Bearer s3cret" || b != "other: " {
		t.Errorf("requests saw %q then %q; want the token at the server only", a, b)
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"Bearer s3cret", true},
		{"Bearer s3cre", false},
		{"Bearer s3cret2", false},
		{"bearer s3cret", false},
		{"s3cret", false},
		{"", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := bearer.Matches(r, "s3cret"); got != tc.want {
			t.Errorf("Authorization %q: Matches = %v, want %v", tc.header, got, tc.want)
		}
	}
}
