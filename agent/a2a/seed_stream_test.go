package a2a

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/llm"
	"github.com/devicectl/devicectl/agent/localtools"
	"github.com/devicectl/devicectl/agent/rules"
	"github.com/devicectl/devicectl/tools"
)

// waitLimit bounds how long a test waits for something the server must send at once; reaching
// it is the test's failure, not its synchronisation.
const waitLimit = 10 * time.Second

type sseEvent struct{ name, data string }

// sseStream reads a POST /tasks/send/stream as it arrives: the response once its headers are
// in, then each event.
type sseStream struct {
	resp   chan *http.Response
	events chan sseEvent
	errs   chan error
}

func openStream(t *testing.T, url, body string) *sseStream {
	t.Helper()
	s := &sseStream{resp: make(chan *http.Response, 1), events: make(chan sseEvent, 64), errs: make(chan error, 1)}
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	go func() {
		defer close(s.events)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			s.errs <- err
			return
		}
		defer resp.Body.Close()
		s.resp <- resp
		r := bufio.NewReader(resp.Body)
		var ev sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				if err != io.EOF {
					s.errs <- err
				}
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.name != "" || ev.data != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

// headers waits for the response's headers.
func (s *sseStream) headers(t *testing.T, while string) *http.Response {
	t.Helper()
	select {
	case resp := <-s.resp:
		return resp
	case err := <-s.errs:
		t.Fatalf("stream: %v", err)
	case <-time.After(waitLimit):
		t.Fatalf("no response headers %s after %v", while, waitLimit)
	}
	return nil
}

// next waits for the next event; ok is false at the end of the stream.
func (s *sseStream) next(t *testing.T, while string) (ev sseEvent, ok bool) {
	t.Helper()
	select {
	case ev, ok = <-s.events:
		return ev, ok
	case <-time.After(waitLimit):
		t.Fatalf("no event %s after %v", while, waitLimit)
	}
	return ev, false
}

// reassembler is a client that follows the stream's artifact events as A2A says: append false
// starts the artifact's text, true adds to it, lastChunk ends it.
type reassembler struct {
	texts  map[int]*strings.Builder
	closed map[int]bool
	final  *sseStatusEvent
	events []string
}

func newReassembler() *reassembler {
	return &reassembler{texts: map[int]*strings.Builder{}, closed: map[int]bool{}}
}

func (r *reassembler) add(t *testing.T, ev sseEvent) {
	t.Helper()
	r.events = append(r.events, ev.name+" "+ev.data)
	if r.final != nil {
		t.Errorf("an event after the final status: %s %s", ev.name, ev.data)
	}
	switch ev.name {
	case "artifact":
		var a struct {
			ID       string `json:"id"`
			Artifact struct {
				Parts     []seedPart `json:"parts"`
				Index     *int       `json:"index"`
				Append    *bool      `json:"append"`
				LastChunk *bool      `json:"lastChunk"`
			} `json:"artifact"`
		}
		if err := json.Unmarshal([]byte(ev.data), &a); err != nil {
			t.Fatalf("artifact event %s: %v", ev.data, err)
		}
		art := a.Artifact
		if art.Index == nil || art.Append == nil || art.LastChunk == nil {
			t.Fatalf("artifact event without index, append or lastChunk: %s", ev.data)
		}
		i := *art.Index
		if r.closed[i] {
			t.Errorf("artifact %d goes on after its lastChunk: %s", i, ev.data)
		}
		b := r.texts[i]
		if b == nil || !*art.Append {
			b = &strings.Builder{}
			r.texts[i] = b
		}
		for _, p := range art.Parts {
			b.WriteString(p.Text)
		}
		r.closed[i] = *art.LastChunk
	case "status":
		var s sseStatusEvent
		if err := json.Unmarshal([]byte(ev.data), &s); err != nil {
			t.Fatalf("status event %s: %v", ev.data, err)
		}
		if s.Final {
			r.final = &s
		}
	default:
		t.Errorf("unexpected event %q: %s", ev.name, ev.data)
	}
}

// whole is the text of artifact i, once its lastChunk came.
func (r *reassembler) whole(t *testing.T, i int) string {
	t.Helper()
	if !r.closed[i] {
		t.Fatalf("artifact %d never got its lastChunk; events:\n%s", i, strings.Join(r.events, "\n"))
	}
	return r.texts[i].String()
}

// drain reads the rest of the stream into r.
func (s *sseStream) drain(t *testing.T, r *reassembler) {
	t.Helper()
	for {
		ev, ok := s.next(t, "before the end of the stream")
		if !ok {
			return
		}
		r.add(t, ev)
	}
}

func streamBody(taskID, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"s1","method":"tasks/send/stream","params":{"id":%q,"message":{"role":"user","parts":[{"type":"text","text":%q}]}}}`, taskID, text)
}

// storedReply is the stored task's final text and its artifact i.
func storedReply(t *testing.T, base, taskID string, i int) (final, artifact string) {
	t.Helper()
	body, code := get(t, base+"/tasks/"+taskID)
	var task seedTask
	if err := json.Unmarshal([]byte(body), &task); err != nil || code != http.StatusOK {
		t.Fatalf("GET task: %d %s", code, body)
	}
	if task.Status.State != stateCompleted || task.Status.Message == nil || len(task.Artifacts) <= i {
		t.Fatalf("stored task: %s", body)
	}
	return task.Status.Message.Parts[0].Text, task.Artifacts[i].Parts[0].Text
}

// TestSeedStreamWorkingBeforeTurn: a turn that has yielded nothing yet (a planner still
// thinking) does not hold back the stream's headers and working status.
func TestSeedStreamWorkingBeforeTurn(t *testing.T) {
	run := &fakeRunner{block: true, started: make(chan struct{}, 1)}
	ts := newTestServer(t, run, "", nil)
	s := openStream(t, ts.URL+PathSeedStream, streamBody("task-b", "hi"))
	<-run.started // the turn is blocked before its first event, until canceled
	resp := s.headers(t, "while the turn is blocked")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	ev, _ := s.next(t, "while the turn is blocked")
	if ev.name != "status" || !strings.Contains(ev.data, `"state":"working"`) || !strings.Contains(ev.data, `"final":false`) {
		t.Fatalf("first event: %s %s", ev.name, ev.data)
	}
	if body, _ := get(t, ts.URL+"/tasks/task-b"); !strings.Contains(body, `"state":"working"`) {
		t.Errorf("the task while the turn is blocked: %s", body)
	}
	post(t, ts.URL+PathSeedSend, `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"id":"task-b"}}`)
	r := newReassembler()
	s.drain(t, r)
	if r.final == nil || r.final.Status.State != stateCanceled {
		t.Errorf("after the cancel: %v", r.events)
	}
}

// TestSeedStreamDeviceRefused: a stream's headers and working status go out before the agent
// picks the device, so a refusal ends the task failed, with the registered MACs as the reason.
func TestSeedStreamDeviceRefused(t *testing.T) {
	run := &fakeRunner{err: &agent.DeviceChoiceError{Asked: "cc:cc:cc:cc:cc:cc", MACs: []string{"aa:aa:aa:aa:aa:aa"}}}
	ts := newTestServer(t, run, "", nil)
	s := openStream(t, ts.URL+PathSeedStream, streamBody("task-d", "hi"))
	s.headers(t, "for a refused device")
	r := newReassembler()
	s.drain(t, r)
	const why = "No device cc:cc:cc:cc:cc:cc is registered; registered: aa:aa:aa:aa:aa:aa"
	if len(r.events) != 2 || r.final == nil || r.final.Status.State != stateFailed ||
		r.final.Status.Message == nil || r.final.Status.Message.Parts[0].Text != why {
		t.Errorf("events:\n%s\nwant working, then failed with %q", strings.Join(r.events, "\n"), why)
	}
	if body, _ := get(t, ts.URL+"/tasks/task-d"); !strings.Contains(body, `"state":"failed"`) || !strings.Contains(body, why) {
		t.Errorf("stored: %s", body)
	}
}

// fakeModel is an OpenAI-compatible endpoint that holds each answer until it takes a value
// from release, then streams the reply in pieces, flushing each, as a model does.
type fakeModel struct {
	*httptest.Server
	asked   chan struct{}
	release chan struct{}
}

func newFakeModel(t *testing.T, pieces []string) *fakeModel {
	m := &fakeModel{asked: make(chan struct{}, 1), release: make(chan struct{}, 1)}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		m.asked <- struct{}{}
		select {
		case <-m.release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		chunk := func(delta, finish string) {
			fin := "null"
			if finish != "" {
				fin = `"` + finish + `"`
			}
			fmt.Fprintf(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, fin)
			fl.Flush()
		}
		chunk(`{"role":"assistant","content":""}`, "")
		for _, p := range pieces {
			b, _ := json.Marshal(map[string]string{"content": p})
			chunk(string(b), "")
		}
		chunk(`{}`, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
		fl.Flush()
	}))
	t.Cleanup(m.Close)
	return m
}

// localAgent is a real agent with the server's own tools and no device.
func localAgent(t *testing.T, p agent.Planner) *agent.Agent {
	t.Helper()
	reg := tools.NewRegistry()
	if err := localtools.Register(reg, nil); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(&agent.Options{Planner: p, Local: reg})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSeedStreamLLM: behind the llm planner, a model that has not answered yet does not hold back
// the headers and the working status; once it answers, its pieces stream as appends to one
// artifact, the last marked lastChunk, and a client that follows append and lastChunk gets the
// task's final text.
func TestSeedStreamLLM(t *testing.T) {
	pieces := []string{"Hello", " there", "! 我可以", "帮你调音量。"}
	model := newFakeModel(t, pieces)
	p, err := llm.New(&llm.Options{BaseURL: model.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, localAgent(t, p), "", nil)
	// An earlier turn, so that the streamed artifact is the task's second.
	model.release <- struct{}{}
	post(t, ts.URL+PathSeedSend, `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"id":"task-l","sessionId":"s","message":{"role":"user","parts":[{"type":"text","text":"hi"}]}}}`)
	<-model.asked

	s := openStream(t, ts.URL+PathSeedStream, strings.Replace(streamBody("task-l", "你好"), `"params":{`, `"params":{"sessionId":"s",`, 1))
	<-model.asked // the planner waits on the model, which holds its answer
	s.headers(t, "while the model has not answered")
	ev, _ := s.next(t, "while the model has not answered")
	if ev.name != "status" || !strings.Contains(ev.data, `"state":"working"`) {
		t.Fatalf("first event: %s %s", ev.name, ev.data)
	}
	r := newReassembler()
	r.add(t, ev)
	model.release <- struct{}{}
	s.drain(t, r)

	got := r.whole(t, 1)
	final, artifact := storedReply(t, ts.URL, "task-l", 1)
	if want := strings.Join(pieces, ""); got != want || final != want || artifact != want {
		t.Errorf("reassembled %q, stored final %q and artifact %q; want %q", got, final, artifact, want)
	}
	if artifacts := strings.Count(strings.Join(r.events, "\n"), "artifact {"); artifacts < len(pieces) {
		t.Errorf("%d artifact events for %d pieces: the reply did not stream:\n%s", artifacts, len(pieces), strings.Join(r.events, "\n"))
	}
}

// TestSeedStreamRules: the rule planner's reply, in one piece, still ends with lastChunk, and the
// text a following client puts together is the task's final.
func TestSeedStreamRules(t *testing.T) {
	ts := newTestServer(t, localAgent(t, rules.New(nil)), "", nil)
	s := openStream(t, ts.URL+PathSeedStream, streamBody("task-r", "3*(4+5)"))
	r := newReassembler()
	s.drain(t, r)
	got := r.whole(t, 0)
	final, artifact := storedReply(t, ts.URL, "task-r", 0)
	if got != final || got != artifact || !strings.Contains(got, "27") {
		t.Errorf("reassembled %q, stored final %q and artifact %q", got, final, artifact)
	}
}

// TestSeedStreamFinalNotChunks: a final that is not the chunks joined replaces them, so a client
// still ends with the final's text.
func TestSeedStreamFinalNotChunks(t *testing.T) {
	ts := newTestServer(t, finalRunner{chunks: []string{"draft ", "text"}, final: "the real reply"}, "", nil)
	s := openStream(t, ts.URL+PathSeedStream, streamBody("task-f", "hi"))
	r := newReassembler()
	s.drain(t, r)
	if got := r.whole(t, 0); got != "the real reply" {
		t.Errorf("reassembled %q; events:\n%s", got, strings.Join(r.events, "\n"))
	}
}

// finalRunner streams chunks, then a final of its own.
type finalRunner struct {
	chunks []string
	final  string
}

func (f finalRunner) Turn(ctx context.Context, r agent.Request) iter.Seq[agent.Event] {
	return func(yield func(agent.Event) bool) {
		for _, c := range f.chunks {
			if !yield(agent.Event{Kind: agent.EventChunk, Text: c}) {
				return
			}
		}
		yield(agent.Event{Kind: agent.EventFinal, Text: f.final})
	}
}

func (f finalRunner) Tools(string) []tools.Declaration { return nil }
