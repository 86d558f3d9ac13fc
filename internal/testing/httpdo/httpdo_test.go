package httpdo

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGetAndDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusTeapot)
		}
		fmt.Fprintf(w, "%s %s host=%s", r.Method, r.URL.Path, r.Host)
	}))
	defer srv.Close()
	if code, body := Get(t, srv.URL+"/a"); code != http.StatusOK || body != "GET /a host="+strings.TrimPrefix(srv.URL, "http://") {
		t.Errorf("Get = %d %q", code, body)
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/b", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "elsewhere.example"
	if code, body := Do(t, req); code != http.StatusTeapot || body != "POST /b host=elsewhere.example" {
		t.Errorf("Do = %d %q", code, body)
	}
}
