//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/web"
	"github.com/devicectl/devicectl/hal"
	"github.com/devicectl/devicectl/hal/faces"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// replyTurner answers every turn with its events (a planner's thought, a call of the server's
// own tools, ...), the same chunks, then their join as the final.
type replyTurner struct {
	before []agent.Event
	chunks []string
}

func (r replyTurner) Turn(_ context.Context, _ agent.Request) iter.Seq[agent.Event] {
	return func(yield func(agent.Event) bool) {
		for _, e := range r.before {
			if !yield(e) {
				return
			}
		}
		for _, c := range r.chunks {
			if !yield(agent.Event{Kind: agent.EventChunk, Text: c}) {
				return
			}
		}
		yield(agent.Event{Kind: agent.EventFinal, Text: strings.Join(r.chunks, "")})
	}
}

func newHandler(t *testing.T, token string) (*httptest.Server, *web.Handler) {
	t.Helper()
	return newHandlerWith(t, &web.Options{Agent: replyTurner{chunks: []string{"好的，", "音量", "调到30了。"}}, Token: token})
}

// newHandlerWith serves a Handler with o (Hub filled in) on loopback.
func newHandlerWith(t *testing.T, o *web.Options) (*httptest.Server, *web.Handler) {
	t.Helper()
	h := hub.New(nil)
	o.Hub = h
	w, err := web.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		w.Close()
		srv.Close()
		h.Close()
	})
	return srv, w
}

func do(t *testing.T, method, url string, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Without a token the page is open, but only to loopback Host names (no DNS rebinding), and
// never to a POST from another origin.
func TestOpenAccess(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := newHandler(t, "")
	if resp, body := do(t, "GET", srv.URL+"/", "", nil); resp.StatusCode != 200 || !strings.Contains(body, `<label for="say-text">`) {
		t.Errorf("GET /: %s %.80q", resp.Status, body)
	}
	if resp, _ := do(t, "GET", srv.URL+"/", "", map[string]string{"Host": "rebound.example:80"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET / with a foreign Host: %s, want 403", resp.Status)
	}
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
		{"Origin": "http://evil.example"},
	} {
		h["Content-Type"] = "application/json"
		if resp, _ := do(t, "POST", srv.URL+"/web/say", `{"text":"把音量调到100"}`, h); resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST /web/say from another origin (%v): %s, want 403", h, resp.Status)
		}
	}
	if resp, body := do(t, "POST", srv.URL+"/web/say", `{"text":"  "}`, map[string]string{"Origin": srv.URL}); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("POST /web/say with blank text: %s %q, want 400", resp.Status, body)
	}
	if resp, _ := do(t, "GET", srv.URL+"/web/face/grin.png", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown face: %s, want 404", resp.Status)
	}
	resp, body := do(t, "GET", srv.URL+"/web/face/amazed.png", "", nil)
	img, err := png.Decode(strings.NewReader(body))
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("GET the amazed face: %s, %v", resp.Status, err)
	}
	var want bytes.Buffer
	if err := png.Encode(&want, faces.Draw(hal.Amazed, 128, 64)); err != nil {
		t.Fatal(err)
	}
	if body != want.String() {
		t.Errorf("the amazed face (%v) is not faces.Draw's", img.Bounds())
	}
}

// With a token the page's data needs it: as a bearer token, or the cookie it is traded for.
// What is said comes back on the event stream, chunk by chunk.
func TestTokenAccess(t *testing.T) {
	leakcheck.Check(t)
	const token = "s3cret-token"
	srv, w := newHandler(t, token)
	if resp, body := do(t, "GET", srv.URL+"/web/session", "", nil); resp.StatusCode != 200 || !strings.Contains(body, `"authorized":false`) {
		t.Errorf("GET /web/session without credentials: %s %s", resp.Status, body)
	}
	if resp, _ := do(t, "GET", srv.URL+"/web/events", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /web/events without credentials: %s, want 401", resp.Status)
	}
	if resp, _ := do(t, "POST", srv.URL+"/web/session", "", map[string]string{"Authorization": "Bearer wrong"}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /web/session with a wrong token: %s, want 401", resp.Status)
	}
	resp, _ := do(t, "POST", srv.URL+"/web/session", "", map[string]string{"Authorization": "Bearer " + token, "Origin": srv.URL})
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "devicectl_web" {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusNoContent || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || strings.Contains(cookie.Value, token) {
		t.Fatalf("POST /web/session with the token: %s, cookie %+v; want an HttpOnly SameSite=Strict cookie without the token", resp.Status, cookie)
	}
	if resp, _ := do(t, "POST", srv.URL+"/web/session", "", map[string]string{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /web/session from another site: %s, want 403", resp.Status)
	}
	// Off loopback is fine with a token.
	if resp, _ := do(t, "GET", srv.URL+"/", "", map[string]string{"Host": "robot.lan:8765"}); resp.StatusCode != 200 {
		t.Errorf("GET / as robot.lan with a token configured: %s, want 200", resp.Status)
	}

	req, err := http.NewRequest("GET", srv.URL+"/web/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(cookie)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != 200 || stream.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /web/events with the cookie: %s %s", stream.Status, stream.Header.Get("Content-Type"))
	}
	events := sseEvents(bufio.NewReader(stream.Body))
	if e, ok := events(); !ok || e[0] != "snapshot" {
		t.Fatalf("first event %q, want the snapshot", e)
	}
	if resp, body := do(t, "POST", srv.URL+"/web/say", `{"text":"把音量调到30"}`, map[string]string{"Cookie": cookie.Name + "=" + cookie.Value, "Origin": srv.URL}); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /web/say with the cookie: %s %s", resp.Status, body)
	}
	var got []string
	for len(got) == 0 || got[len(got)-1] != "end" {
		e, ok := events()
		if !ok {
			t.Fatalf("the stream ended after %q", got)
		}
		got = append(got, e[0])
		if e[0] == "chunk" && !strings.Contains(e[1], `"id":1`) {
			t.Errorf("chunk %s is not turn 1's", e[1])
		}
	}
	if want := "turn chunk chunk chunk end"; strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", got, want)
	}
	// Close ends the open stream.
	w.Close()
	for {
		if _, ok := events(); !ok {
			break
		}
	}
}

// sseEvents reads Server-Sent Events: each call returns the next one's name and data.
func sseEvents(r *bufio.Reader) func() ([2]string, bool) {
	return func() ([2]string, bool) {
		var e [2]string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return e, false
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "" && e[0] != "":
				return e, true
			case strings.HasPrefix(line, "event: "):
				e[0] = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				e[1] = line[len("data: "):]
			}
		}
	}
}

// The server's own tools are logged from the turn, with their duration; thoughts reach the page
// only when enabled.
func TestServerToolsAndThoughts(t *testing.T) {
	leakcheck.Check(t)
	turner := replyTurner{
		before: []agent.Event{
			{Kind: agent.EventThought, Text: "the user wants arithmetic"},
			{Kind: agent.EventToolCall, Tool: "calculate", Input: []byte(`{"expression":"3*(4+5)"}`)},
			{Kind: agent.EventToolResult, Tool: "calculate", Result: []byte(`{"result":27}`)},
			{Kind: agent.EventToolCall, Tool: "search_web", Input: []byte(`{"query":"x"}`)},
			{Kind: agent.EventToolResult, Tool: "search_web", Err: errors.New("no search backend is configured")},
		},
		chunks: []string{"27"},
	}
	for _, show := range []bool{true, false} {
		srv, _ := newHandlerWith(t, &web.Options{Agent: turner, ShowThoughts: show})
		resp, err := http.Get(srv.URL + "/web/events")
		if err != nil {
			t.Fatal(err)
		}
		events := sseEvents(bufio.NewReader(resp.Body))
		events() // the snapshot
		if r, body := do(t, "POST", srv.URL+"/web/say", `{"text":"3*(4+5)"}`, map[string]string{"Origin": srv.URL}); r.StatusCode != http.StatusAccepted {
			t.Fatalf("POST /web/say: %s %s", r.Status, body)
		}
		var got []string
		for len(got) == 0 || got[len(got)-1] != "end" {
			e, ok := events()
			if !ok {
				t.Fatalf("the stream ended after %q", got)
			}
			got = append(got, e[0])
			if e[0] != "call" {
				continue
			}
			var c struct {
				Tool, Where, Error string
				Input, Result      json.RawMessage
				MS                 *float64
			}
			if err := json.Unmarshal([]byte(e[1]), &c); err != nil {
				t.Fatal(err)
			}
			switch {
			case c.Where != "server" || c.MS == nil:
				t.Errorf("call %s: want a server tool with a duration", e[1])
			case c.Tool == "calculate" && (string(c.Input) != `{"expression":"3*(4+5)"}` || string(c.Result) != `{"result":27}` || c.Error != ""):
				t.Errorf("calculate logged as %s", e[1])
			case c.Tool == "search_web" && (c.Error != "no search backend is configured" || c.Result != nil):
				t.Errorf("search_web logged as %s", e[1])
			}
		}
		resp.Body.Close()
		want := "turn call call chunk end"
		if show {
			want = "turn thought call call chunk end"
		}
		if strings.Join(got, " ") != want {
			t.Errorf("ShowThoughts %t: events %q, want %q", show, got, want)
		}
	}
}
