//go:build !devicectl_omit_sim

package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/standin"
)

// sim reaches a search backend through --searxng-url, or through a config file's
// agent.search.searxng_url with --config; the rule planner's search then answers with its titles.
func TestSimSearch(t *testing.T) {
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"query":"golang","results":[{"url":"https://go.dev/","title":"The Go Programming Language","content":"Go is an open source programming language.","engine":"ddg","score":1.0}]}`))
	}))
	defer searx.Close()

	file := standin.WriteFile(t, "devicectl.yaml", "agent:\n  search:\n    searxng_url: "+searx.URL+"\n")
	for name, args := range map[string][]string{
		"flag":   {"sim", "--searxng-url", searx.URL},
		"config": {"sim", "--config", file},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t.Context(), "search for golang\n", args...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, "The Go Programming Language") {
				t.Errorf("the search reply does not give the backend's result:\n%s", r.stdout)
			}
		})
	}
	if r := runCLI(t.Context(), "", "sim", "--config", filepath.Join(t.TempDir(), "missing.yaml")); r.code != 2 || !strings.Contains(r.stderr, "missing.yaml") {
		t.Errorf("a missing config file: exit %d, stderr %q; want 2 naming the file", r.code, r.stderr)
	}
}
