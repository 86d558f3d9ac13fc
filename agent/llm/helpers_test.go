package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/tools"
)

// fakeTurn is an agent.TurnContext that records what the planner does with it, in order.
type fakeTurn struct {
	req   agent.Request
	hist  []agent.Exchange
	decls []tools.Declaration
	// call answers a tool call; nil answers {"status":"success"}.
	call func(name string, input json.RawMessage) (json.RawMessage, error)
	// seen, when set, is told every event as it happens.
	seen func(agent.Event)

	mu     sync.Mutex
	events []agent.Event
}

var _ agent.TurnContext = (*fakeTurn)(nil)

func (f *fakeTurn) Request() agent.Request     { return f.req }
func (f *fakeTurn) History() []agent.Exchange  { return f.hist }
func (f *fakeTurn) Tools() []tools.Declaration { return f.decls }
func (f *fakeTurn) Chunk(text string)          { f.record(agent.Event{Kind: agent.EventChunk, Text: text}) }
func (f *fakeTurn) Thought(text string)        { f.record(agent.Event{Kind: agent.EventThought, Text: text}) }
func (f *fakeTurn) snapshot() (out []agent.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append(out, f.events...)
}

func (f *fakeTurn) record(e agent.Event) {
	f.mu.Lock()
	f.events = append(f.events, e)
	f.mu.Unlock()
	if f.seen != nil {
		f.seen(e)
	}
}

func (f *fakeTurn) Call(ctx context.Context, name string, input json.RawMessage) (json.RawMessage, error) {
	f.record(agent.Event{Kind: agent.EventToolCall, Tool: name, Input: append(json.RawMessage(nil), input...)})
	if f.call == nil {
		return json.RawMessage(`{"status":"success"}`), nil
	}
	return f.call(name, input)
}

// texts is what the planner streamed of one kind, one string per piece.
func (f *fakeTurn) texts(k agent.EventKind) []string {
	var out []string
	for _, e := range f.snapshot() {
		if e.Kind == k {
			out = append(out, e.Text)
		}
	}
	return out
}

// calls is "name input" for every tool call, in order.
func (f *fakeTurn) calls() []string {
	var out []string
	for _, e := range f.snapshot() {
		if e.Kind == agent.EventToolCall {
			out = append(out, e.Tool+" "+string(e.Input))
		}
	}
	return out
}

func mustSchema(t *testing.T, s string) *jsonschema.Schema {
	t.Helper()
	var sc jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		t.Fatal(err)
	}
	return &sc
}

// deviceTools are the tools of a small device, as it declares them at registration.
func deviceTools(t *testing.T) []tools.Declaration {
	return []tools.Declaration{
		{
			Name: "amplify_volume", Description: "Set the speaker volume, 0 to 100.",
			MainType: tools.Remote, SubType: tools.Control,
			Parameters: mustSchema(t, `{"type":"object","properties":{"level":{"type":"integer","minimum":0,"maximum":100,"description":"volume in percent"}},"required":["level"]}`),
		},
		{
			Name: "set_face", Description: "Show a face.",
			MainType: tools.Remote, SubType: tools.Control,
			Parameters: mustSchema(t, `{"type":"object","properties":{"face":{"type":"string","enum":["happy","sad","amazed"]}},"required":["face"]}`),
		},
		{
			Name: "get_status", Description: "What the device is doing.",
			MainType: tools.Remote, SubType: tools.Query,
		},
	}
}

// step is one answer of the replay server.
type step struct {
	file        string // under testdata/; "" for an empty body
	status      int    // 0 is 200
	contentType string // "" is text/event-stream
	// handler, when set, answers instead of the fields above.
	handler http.HandlerFunc
}

func sse(file string) step { return step{file: file} }

// request is what the replay server received.
type request struct {
	header http.Header
	body   map[string]any
}

// replay is an OpenAI-compatible endpoint that answers each request with the next recorded
// response, streamed event by event, and records the requests. The test fails if the planner
// makes more requests than there are steps, or fewer.
type replay struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	steps []step
	reqs  []request
}

func newReplay(t *testing.T, steps ...step) *replay {
	t.Helper()
	r := &replay{t: t, steps: steps}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.srv.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.steps) != 0 {
			t.Errorf("the planner made %d requests; %d recorded answers were never asked for", len(r.reqs), len(r.steps))
		}
	})
	return r
}

func (r *replay) url() string { return r.srv.URL + "/v1" }

func (r *replay) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.reqs...)
}

func (r *replay) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/chat/completions" {
		r.t.Errorf("unexpected %s %s", req.Method, req.URL.Path)
		http.NotFound(w, req)
		return
	}
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		r.t.Errorf("reading the request: %v", err)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		r.t.Errorf("the request body is not JSON: %v\n%s", err, raw)
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, request{header: req.Header.Clone(), body: body})
	if len(r.steps) == 0 {
		r.mu.Unlock()
		r.t.Errorf("request %d: no recorded answer left", len(r.reqs))
		http.Error(w, "no recorded answer left", http.StatusTeapot)
		return
	}
	s := r.steps[0]
	r.steps = r.steps[1:]
	r.mu.Unlock()

	if s.handler != nil {
		s.handler(w, req)
		return
	}
	var data []byte
	if s.file != "" {
		data = readTestdata(r.t, s.file)
	}
	ct := s.contentType
	if ct == "" {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	if s.status != 0 && s.status != http.StatusOK {
		w.WriteHeader(s.status)
		w.Write(data)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	writeEvents(w, data)
}

// writeEvents streams an SSE body one event at a time, flushing after each, as a server does.
func writeEvents(w http.ResponseWriter, data []byte) {
	fl, _ := w.(http.Flusher)
	for ev := range bytes.SplitAfterSeq(data, []byte("\n\n")) {
		w.Write(ev)
		if fl != nil {
			fl.Flush()
		}
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cutAfter answers with the first n events of a recorded stream, then drops the connection in
// the middle of the next one, without the chunked encoding's terminator.
func cutAfter(t *testing.T, file string, n int) step {
	return step{handler: func(w http.ResponseWriter, req *http.Request) {
		data := readTestdata(t, file)
		var head []byte
		events := bytes.SplitAfter(data, []byte("\n\n"))
		for _, ev := range events[:n] {
			head = append(head, ev...)
		}
		half := events[n][:len(events[n])/2]
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(buf, "%x\r\n%s\r\n", len(head), head)
		fmt.Fprintf(buf, "%x\r\n%s", len(events[n]), half) // the chunk is promised whole, but cut
		buf.Flush()
	}}
}

// newPlanner is a Planner on the replay server with test-friendly options; edit may change them.
func newPlanner(t *testing.T, url string, edit func(*Options)) *Planner {
	t.Helper()
	o := &Options{BaseURL: url, Model: "test-model"}
	if edit != nil {
		edit(o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// messages are the request's messages, each as role plus its fields.
func messages(t *testing.T, r request) []map[string]any {
	t.Helper()
	raw, ok := r.body["messages"].([]any)
	if !ok {
		t.Fatalf("the request has no messages: %v", r.body)
	}
	out := make([]map[string]any, len(raw))
	for i, m := range raw {
		out[i], _ = m.(map[string]any)
	}
	return out
}

// roles is the roles of the request's messages joined by spaces.
func roles(t *testing.T, r request) string {
	var s []string
	for _, m := range messages(t, r) {
		s = append(s, fmt.Sprint(m["role"]))
	}
	return strings.Join(s, " ")
}

// sseLines checks a testdata stream is in the wire format: every line of an event is
// "data: ...", each event a JSON chunk or [DONE], events separated by blank lines.
func sseLines(t *testing.T, data []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		payload, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Errorf("line %d is not a data line: %q", n, line)
			continue
		}
		if payload != "[DONE]" && !json.Valid([]byte(payload)) {
			t.Errorf("line %d is not JSON: %q", n, payload)
		}
	}
}
