package openapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/devicectl/devicectl/tools/openapi"
)

// TestUserAgent: the document's fetch and every call carry Options.UserAgent
// (devicectl sends devicectl/VERSION, as its OpenTool client does), and
// DefaultUserAgent without it, never Go's default.
func TestUserAgent(t *testing.T) {
	spec, err := os.ReadFile("testdata/arm-3.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("User-Agent"))
		mu.Unlock()
		if r.URL.Path == "/arm.yaml" {
			w.Write(spec)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer s.Close()
	for _, tt := range []struct{ opt, want string }{
		{"devicectl/1.2.3", "devicectl/1.2.3"},
		{"", openapi.DefaultUserAgent},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		ts, err := openapi.Load(context.Background(), s.URL+"/arm.yaml", &openapi.Options{
			UserAgent: tt.opt, Include: []string{"getJoint"},
			Auth: openapi.Auth{APIKey: apiKeySecret, APIKeyScheme: "deviceKey"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := call(t, registry(t, ts), "getJoint", `{"joint":"elbow"}`); err != nil {
			t.Fatal(err)
		}
		want := []string{"/arm.yaml " + tt.want, "/api/joints/elbow " + tt.want}
		mu.Lock()
		if !slices.Equal(seen, want) {
			t.Errorf("UserAgent %q: the server saw %q, want %q", tt.opt, seen, want)
		}
		mu.Unlock()
	}
	_, err = openapi.FromData(spec, &openapi.Options{BaseURL: "http://x", UserAgent: "devicectl/1\r\nX-Evil: 1"})
	if err == nil || !strings.Contains(err.Error(), "control character") {
		t.Errorf("a User-Agent with CR LF: error %v, want one about a control character", err)
	}
}
