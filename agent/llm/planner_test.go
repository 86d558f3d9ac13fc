package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

func TestTestdataIsWireFormat(t *testing.T) {
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded streams: %v", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "garbage.sse" {
			continue // not JSON on purpose
		}
		t.Run(filepath.Base(f), func(t *testing.T) { sseLines(t, readTestdata(t, filepath.Base(f))) })
	}
}

func TestPlainAnswerStreamsChunksInOrder(t *testing.T) {
	r := newReplay(t, sse("plain.sse"))
	turn := &fakeTurn{req: agent.Request{Text: "hi"}}
	if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	want := []string{"Hello", " there", "! 我可以", "帮你调音量。"}
	if got := turn.texts(agent.EventChunk); !slices.Equal(got, want) {
		t.Errorf("chunks = %q, want %q", got, want)
	}
	if got := turn.texts(agent.EventThought); len(got) != 0 {
		t.Errorf("thoughts = %q, want none", got)
	}
	req := r.requests()[0]
	if req.body["model"] != "test-model" || req.body["stream"] != true {
		t.Errorf("model, stream = %v, %v", req.body["model"], req.body["stream"])
	}
	if _, ok := req.body["tools"]; ok {
		t.Errorf("a turn with no tools sent a tools array: %v", req.body["tools"])
	}
	if _, ok := req.body["temperature"]; ok {
		t.Errorf("temperature sent though not configured")
	}
	msgs := messages(t, req)
	if roles(t, req) != "system user" || msgs[0]["content"] != DefaultSystemPrompt || msgs[1]["content"] != "hi" {
		t.Errorf("messages = %v", msgs)
	}
}

// A chunk reaches the device while the model is still writing, not when the stream ends: the
// server holds back the rest of the stream until the turn has seen the first chunk.
func TestChunksStreamAsTheyArrive(t *testing.T) {
	first := make(chan struct{})
	var once sync.Once
	r := newReplay(t, step{handler: func(w http.ResponseWriter, req *http.Request) {
		events := bytes.SplitAfter(readTestdata(t, "plain.sse"), []byte("\n\n"))
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvents(w, bytes.Join(events[:2], nil)) // the role, then "Hello"
		select {
		case <-first:
		case <-time.After(10 * time.Second):
			t.Error("the first chunk was not delivered while the stream was still open")
		}
		writeEvents(w, bytes.Join(events[2:], nil))
	}})
	turn := &fakeTurn{req: agent.Request{Text: "hi"}, seen: func(e agent.Event) {
		if e.Kind == agent.EventChunk {
			once.Do(func() { close(first) })
		}
	}}
	if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	if got := len(turn.texts(agent.EventChunk)); got != 4 {
		t.Errorf("%d chunks, want 4", got)
	}
}

// Servers add parameters to the media type (OpenAI and vLLM send a charset): still a stream.
func TestEventStreamWithParameters(t *testing.T) {
	r := newReplay(t, step{file: "plain.sse", contentType: "text/event-stream; charset=utf-8"})
	turn := &fakeTurn{req: agent.Request{Text: "hi"}}
	if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(turn.texts(agent.EventChunk), ""); got != "Hello there! 我可以帮你调音量。" {
		t.Errorf("reply = %q", got)
	}
}

func TestReasoningBecomesThoughts(t *testing.T) {
	for _, tc := range []struct {
		file             string
		thoughts, chunks []string
	}{
		{"reasoning_content.sse", []string{"The user", " says hi."}, []string{"Hi", "!"}},
		{"reasoning_ollama.sse", []string{"Okay,", " a greeting."}, []string{"你好", "！"}},
		{"reasoning_both.sse", []string{"Short", " thought."}, []string{"Done."}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := newReplay(t, sse(tc.file))
			turn := &fakeTurn{req: agent.Request{Text: "hi"}}
			if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
				t.Fatal(err)
			}
			if got := turn.texts(agent.EventThought); !slices.Equal(got, tc.thoughts) {
				t.Errorf("thoughts = %q, want %q", got, tc.thoughts)
			}
			if got := turn.texts(agent.EventChunk); !slices.Equal(got, tc.chunks) {
				t.Errorf("chunks = %q, want %q", got, tc.chunks)
			}
			// Reasoning first, then the reply: never interleaved into it.
			ev := turn.snapshot()
			if ev[0].Kind != agent.EventThought || ev[len(ev)-1].Kind != agent.EventChunk {
				t.Errorf("events out of order: %v", ev)
			}
		})
	}
}

func TestToolCallFragmentsJoinedAndResultFedBack(t *testing.T) {
	r := newReplay(t, sse("tool_fragments.sse"), sse("after_tool.sse"))
	turn := &fakeTurn{req: agent.Request{Text: "turn it up to 80"}, decls: deviceTools(t)}
	if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	if got, want := turn.calls(), []string{`amplify_volume {"level":80}`}; !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if got, want := turn.texts(agent.EventChunk), []string{"Volume", " is now 80."}; !slices.Equal(got, want) {
		t.Errorf("chunks = %q, want %q", got, want)
	}
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := roles(t, reqs[1]); got != "system user assistant tool" {
		t.Fatalf("second request's roles = %q", got)
	}
	msgs := messages(t, reqs[1])
	calls, _ := msgs[2]["tool_calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("assistant message = %v", msgs[2])
	}
	call := calls[0].(map[string]any)
	fn := call["function"].(map[string]any)
	if call["id"] != "call_7f3aQz9" || call["type"] != "function" || fn["name"] != "amplify_volume" || fn["arguments"] != `{"level":80}` {
		t.Errorf("assistant tool call = %v", call)
	}
	if msgs[3]["tool_call_id"] != "call_7f3aQz9" || msgs[3]["content"] != `{"status":"success"}` {
		t.Errorf("tool message = %v", msgs[3])
	}
}

func TestParallelToolCalls(t *testing.T) {
	for _, tc := range []struct {
		file string
		ids  []string
	}{
		{"parallel_tools.sse", []string{"call_face01", "call_vol02"}},
		// Ollama sends each call whole, all at index 0, with distinct ids.
		{"parallel_index0.sse", []string{"call_k2b8n3x1", "call_p9w4c6v0"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := newReplay(t, sse(tc.file), sse("after_parallel.sse"))
			turn := &fakeTurn{req: agent.Request{Text: "smile and set volume to 30"}, decls: deviceTools(t),
				call: func(name string, _ json.RawMessage) (json.RawMessage, error) {
					return json.RawMessage(`{"done":"` + name + `"}`), nil
				}}
			if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
				t.Fatal(err)
			}
			want := []string{`set_face {"face": "happy"}`, `amplify_volume {"level": 30}`}
			if tc.file == "parallel_index0.sse" {
				want = []string{`set_face {"face":"happy"}`, `amplify_volume {"level":30}`}
			}
			if got := turn.calls(); !slices.Equal(got, want) {
				t.Errorf("calls = %q, want %q", got, want)
			}
			msgs := messages(t, r.requests()[1])
			if got := roles(t, r.requests()[1]); got != "system user assistant tool tool" {
				t.Fatalf("roles = %q", got)
			}
			for i, name := range []string{"set_face", "amplify_volume"} {
				m := msgs[3+i]
				if m["tool_call_id"] != tc.ids[i] || m["content"] != `{"done":"`+name+`"}` {
					t.Errorf("tool message %d = %v", i, m)
				}
			}
			if tc.file == "parallel_tools.sse" && msgs[2]["content"] != "On it." {
				t.Errorf("the text before the calls was not fed back: %v", msgs[2])
			}
		})
	}
}

func TestToolErrorFedBackToModel(t *testing.T) {
	r := newReplay(t, sse("tool_fragments.sse"), sse("after_tool_error.sse"))
	turn := &fakeTurn{req: agent.Request{Text: "louder"}, decls: deviceTools(t),
		call: func(string, json.RawMessage) (json.RawMessage, error) {
			return nil, &agent.ToolError{Code: protocol.CodeBusy, Message: "speaker busy", Details: "playing a sound"}
		}}
	if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	tool := messages(t, r.requests()[1])[3]
	if want := "error: speaker busy (-32002): playing a sound"; tool["content"] != want || tool["tool_call_id"] != "call_7f3aQz9" {
		t.Errorf("tool message = %v, want content %q", tool, want)
	}
	if got := strings.Join(turn.texts(agent.EventChunk), ""); got != "Sorry, the speaker is busy." {
		t.Errorf("reply = %q", got)
	}
}

func TestDeviceGoneEndsTheTurn(t *testing.T) {
	r := newReplay(t, sse("tool_fragments.sse"))
	turn := &fakeTurn{req: agent.Request{Text: "louder"}, decls: deviceTools(t),
		call: func(string, json.RawMessage) (json.RawMessage, error) { return nil, agent.ErrDeviceGone }}
	err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn)
	if !errors.Is(err, agent.ErrDeviceGone) {
		t.Fatalf("err = %v, want ErrDeviceGone", err)
	}
}

func TestInvalidArgumentsFedBackAsError(t *testing.T) {
	r := newReplay(t, sse("bad_args.sse"), sse("after_tool.sse"))
	turn := &fakeTurn{req: agent.Request{Text: "80"}, decls: deviceTools(t)}
	if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	if got := turn.calls(); len(got) != 0 {
		t.Errorf("a tool ran with arguments that are not JSON: %q", got)
	}
	msgs := messages(t, r.requests()[1])
	tool := msgs[3]
	content, _ := tool["content"].(string)
	if tool["tool_call_id"] != "call_bad001" || !strings.HasPrefix(content, "error: the arguments of amplify_volume are not valid JSON") ||
		!strings.Contains(content, `{"level": 80`) {
		t.Errorf("tool message = %v", tool)
	}
	fn := msgs[2]["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if fn["arguments"] != "{}" {
		t.Errorf("arguments fed back = %v, want {} so the server accepts the history", fn["arguments"])
	}
}

func TestUnknownToolAndMissingIDFedBack(t *testing.T) {
	r := newReplay(t, sse("unknown_tool.sse"), sse("tool_no_id.sse"), sse("after_tool.sse"))
	turn := &fakeTurn{req: agent.Request{Text: "launch"}, decls: deviceTools(t)}
	if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	// The made-up tool is not run; get_status, with no arguments at all, runs with {}.
	if got, want := turn.calls(), []string{"get_status {}"}; !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	reqs := r.requests()
	unk := messages(t, reqs[1])[3]
	if c, _ := unk["content"].(string); unk["tool_call_id"] != "call_unk001" ||
		!strings.Contains(c, `no tool named "launch_rocket"`) || !strings.Contains(c, "amplify_volume, set_face, get_status") {
		t.Errorf("tool message = %v", unk)
	}
	msgs := messages(t, reqs[2])
	id := msgs[4]["tool_calls"].([]any)[0].(map[string]any)["id"]
	if id == "" || id == nil || msgs[5]["tool_call_id"] != id {
		t.Errorf("a call without an id: assistant id %v, tool message %v", id, msgs[5])
	}
}

func TestToolRoundsBounded(t *testing.T) {
	for _, file := range []string{"tool_fragments.sse", "bad_args.sse"} {
		t.Run(file, func(t *testing.T) {
			const rounds = 3
			steps := make([]step, rounds+1)
			for i := range steps {
				steps[i] = sse(file)
			}
			r := newReplay(t, steps...)
			turn := &fakeTurn{req: agent.Request{Text: "loop"}, decls: deviceTools(t)}
			err := newPlanner(t, r.url(), func(o *Options) { o.MaxToolRounds = rounds }).Plan(t.Context(), turn)
			if !errors.Is(err, ErrToolRounds) || !strings.Contains(err.Error(), "after 3 rounds") {
				t.Fatalf("err = %v, want ErrToolRounds after 3 rounds", err)
			}
			wantCalls := rounds
			if file == "bad_args.sse" {
				wantCalls = 0
			}
			if got := len(turn.calls()); got != wantCalls {
				t.Errorf("%d calls ran, want %d", got, wantCalls)
			}
			if got := len(r.requests()); got != rounds+1 {
				t.Errorf("%d requests, want %d", got, rounds+1)
			}
		})
	}
}

func TestHistoryAndSystemPrompt(t *testing.T) {
	r := newReplay(t, sse("plain.sse"))
	turn := &fakeTurn{
		req: agent.Request{Text: "and now?"},
		hist: []agent.Exchange{
			{User: "把音量调到30", Reply: "好的，音量是30。"},
			{User: "smile", Reply: ""},
			{User: "how loud?", Reply: "It is at 30."},
		},
	}
	temp := 0.2
	p := newPlanner(t, r.url(), func(o *Options) { o.SystemPrompt = "You are a lamp."; o.Temperature = &temp })
	temp = 1.5 // the planner keeps its own copy
	if err := p.Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	req := r.requests()[0]
	var got []string
	for _, m := range messages(t, req) {
		got = append(got, m["role"].(string)+": "+m["content"].(string))
	}
	want := []string{"system: You are a lamp.", "user: 把音量调到30", "assistant: 好的，音量是30。", "user: smile",
		"user: how loud?", "assistant: It is at 30.", "user: and now?"}
	if !slices.Equal(got, want) {
		t.Errorf("messages:\n%q\nwant\n%q", got, want)
	}
	if req.body["temperature"] != 0.2 {
		t.Errorf("temperature = %v, want 0.2", req.body["temperature"])
	}
}

func TestRequestToolsAreTheDeclarations(t *testing.T) {
	r := newReplay(t, sse("plain.sse"))
	decls := deviceTools(t)
	turn := &fakeTurn{req: agent.Request{Text: "hi"}, decls: decls}
	if err := newPlanner(t, r.url(), nil).Plan(t.Context(), turn); err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, d := range decls {
		params := any(map[string]any{"type": "object", "properties": map[string]any{}})
		if d.Parameters != nil {
			b, _ := json.Marshal(d.Parameters)
			params = nil
			json.Unmarshal(b, &params)
		}
		want = append(want, map[string]any{"type": "function", "function": map[string]any{
			"name": d.Name, "description": d.Description, "parameters": params,
		}})
	}
	got := r.requests()[0].body["tools"]
	if !reflect.DeepEqual(got, any(want)) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("tools:\n%s\nwant\n%s", g, w)
	}
}

func TestAuthorizationOnlyWithAKey(t *testing.T) {
	// The SDK would pick this up if the planner let it read the environment.
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	for _, tc := range []struct{ key, want string }{
		{"", ""},
		{"sk-test-123\n", "Bearer sk-test-123"}, // as read from a file
	} {
		r := newReplay(t, sse("plain.sse"))
		p := newPlanner(t, r.url(), func(o *Options) { o.APIKey = tc.key })
		if err := p.Plan(t.Context(), &fakeTurn{req: agent.Request{Text: "hi"}}); err != nil {
			t.Fatal(err)
		}
		if got := r.requests()[0].header.Get("Authorization"); got != tc.want {
			t.Errorf("key %q: Authorization = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// badEndpoint runs one turn against an endpoint that misbehaves and returns its error, checked to
// be an *EndpointError naming the endpoint and not the key.
func badEndpoint(t *testing.T, url string, edit func(*Options)) (*EndpointError, *fakeTurn) {
	t.Helper()
	const key = "sk-very-secret-key"
	p := newPlanner(t, url, func(o *Options) {
		o.APIKey = key
		if edit != nil {
			edit(o)
		}
	})
	turn := &fakeTurn{req: agent.Request{Text: "hi"}, decls: deviceTools(t)}
	err := p.Plan(t.Context(), turn)
	var ee *EndpointError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v (%T), want an *EndpointError", err, err)
	}
	if !strings.Contains(err.Error(), url+"/chat/completions") {
		t.Errorf("the error does not name the endpoint %s: %v", url, err)
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("the error shows the API key: %v", err)
	}
	return ee, turn
}

func TestEndpointDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	ee, _ := badEndpoint(t, "http://"+addr+"/v1", nil)
	if !strings.Contains(ee.Message, "cannot connect") || !strings.Contains(ee.Message, "refused") {
		t.Errorf("message = %q", ee.Message)
	}
}

func TestEndpointTooSlow(t *testing.T) {
	stall := func(w http.ResponseWriter, req *http.Request) { <-req.Context().Done() }
	stallMidStream := func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvents(w, readTestdata(t, "cut.sse"))
		<-req.Context().Done()
	}
	for name, h := range map[string]http.HandlerFunc{"no headers": stall, "mid-stream": stallMidStream} {
		t.Run(name, func(t *testing.T) {
			r := newReplay(t, step{handler: h})
			start := time.Now()
			ee, _ := badEndpoint(t, r.url(), func(o *Options) { o.Timeout = 200 * time.Millisecond })
			if !errors.Is(ee, ErrTimeout) || !strings.Contains(ee.Message, "within 200ms") {
				t.Errorf("err = %v, want ErrTimeout", ee)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestTurnDeadlineIsNotAnEndpointError(t *testing.T) {
	r := newReplay(t, step{handler: func(w http.ResponseWriter, req *http.Request) { <-req.Context().Done() }})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	err := newPlanner(t, r.url(), nil).Plan(ctx, &fakeTurn{req: agent.Request{Text: "hi"}})
	var ee *EndpointError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ee) {
		t.Errorf("err = %v, want the turn's deadline", err)
	}
}

func TestEndpointErrorStatus(t *testing.T) {
	for _, tc := range []struct {
		file, contentType string
		status            int
		want              string
	}{
		{"error_404_ollama.json", "application/json", 404, `model "nosuch:1b" not found, try pulling it first`},
		{"error_401_openai.json", "application/json; charset=utf-8", 401, "Incorrect API key provided: sk-wron*****2345."},
		{"error_400_vllm.json", "application/json", 400, "This model's maximum context length is 4096 tokens."},
		{"error_503_llamacpp.json", "application/json", 503, "Loading model"},
		{"error_500.txt", "text/plain", 500, "Internal Server Error"},
		{"", "text/plain", 502, "(empty body)"},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			r := newReplay(t, step{file: tc.file, status: tc.status, contentType: tc.contentType})
			ee, _ := badEndpoint(t, r.url(), nil)
			if ee.StatusCode != tc.status || !strings.Contains(ee.Message, tc.want) {
				t.Errorf("status %d, message %q; want %d, %q", ee.StatusCode, ee.Message, tc.status, tc.want)
			}
			if len(r.requests()) != 1 {
				t.Errorf("%d requests: retried", len(r.requests()))
			}
		})
	}
}

func TestEndpointGarbage(t *testing.T) {
	for _, tc := range []struct {
		name string
		step step
		want string
	}{
		{"html from a proxy", step{file: "proxy_page.html", contentType: "text/html"}, "answered with text/html instead of an event stream: <html> <head><title>502 Bad Gateway"},
		{"stream ignored", step{file: "whole_completion.json", contentType: "application/json"}, `answered with application/json instead of an event stream: {"id":"chatcmpl-123"`},
		{"no content type", step{handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = nil
			w.Write([]byte("\x00\x01"))
		}}, "answered with no Content-Type"},
		{"data not json", sse("garbage.sse"), "not a chat-completion chunk"},
		{"no events", sse("no_events.txt"), "the stream ended before the model finished"},
		{"error event", sse("error_event.sse"), "error in the stream: The server had an error while processing your request."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReplay(t, tc.step)
			ee, _ := badEndpoint(t, r.url(), nil)
			if !strings.Contains(ee.Message, tc.want) {
				t.Errorf("message = %q, want it to contain %q", ee.Message, tc.want)
			}
		})
	}
}

func TestStreamCut(t *testing.T) {
	for name, s := range map[string]step{
		"connection dropped":   cutAfter(t, "cut.sse", 2),
		"clean end, no finish": sse("cut.sse"),
	} {
		t.Run(name, func(t *testing.T) {
			r := newReplay(t, s)
			ee, turn := badEndpoint(t, r.url(), nil)
			if name == "clean end, no finish" && !strings.Contains(ee.Message, "ended before the model finished") {
				t.Errorf("message = %q", ee.Message)
			}
			if name == "connection dropped" && !strings.Contains(ee.Message, "unexpected EOF") {
				t.Errorf("message = %q", ee.Message)
			}
			// What arrived before the cut was streamed; the turn's error says it is incomplete.
			if got := turn.texts(agent.EventChunk); len(got) == 0 || got[0] != "The volume" {
				t.Errorf("chunks = %q", got)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	neg := -0.5
	for _, tc := range []struct {
		name string
		o    *Options
		want string
	}{
		{"nil", nil, "base URL and model are required"},
		{"no model", &Options{BaseURL: "http://127.0.0.1:11434/v1"}, "no model"},
		{"no url", &Options{Model: "m"}, "no base URL"},
		{"bad scheme", &Options{BaseURL: "ftp://x/v1", Model: "m"}, "not http:// or https://"},
		{"no scheme", &Options{BaseURL: "127.0.0.1:11434/v1", Model: "m"}, "base URL"},
		{"no host", &Options{BaseURL: "http:///v1", Model: "m"}, "has no host"},
		{"unparsable, password hidden", &Options{BaseURL: "http://u:hunter2@[::1/v1", Model: "m"}, "does not parse"},
		{"whole path", &Options{BaseURL: "http://h/v1/chat/completions", Model: "m"}, "must stop before /chat/completions"},
		{"rounds", &Options{BaseURL: "http://h/v1", Model: "m", MaxToolRounds: -1}, "negative"},
		{"timeout", &Options{BaseURL: "http://h/v1", Model: "m", Timeout: -time.Second}, "negative"},
		{"temperature", &Options{BaseURL: "http://h/v1", Model: "m", Temperature: &neg}, "outside [0, 2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}

	o := &Options{BaseURL: " http://u:pw@127.0.0.1:11434/v1/ ", Model: "qwen2.5:3b"}
	before := *o
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*o, before) {
		t.Errorf("New changed the caller's options: %+v", *o)
	}
	if p.o.MaxToolRounds != DefaultMaxToolRounds || p.o.Timeout != DefaultTimeout || p.o.SystemPrompt != DefaultSystemPrompt ||
		p.o.HTTPClient == nil || p.o.Logger == nil {
		t.Errorf("defaults not filled: %+v", p.o)
	}
	if want := "llm qwen2.5:3b at http://u:xxxxx@127.0.0.1:11434/v1/chat/completions"; p.String() != want {
		t.Errorf("String() = %q, want %q", p.String(), want)
	}
}

func TestErrorMessageShapes(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"a"}}`:  "a",
		`{"error":"b"}`:              "b",
		`{"message":"c","code":400}`: "c",
		`{"detail":"d"}`:             "d",
		`{"detail":[{"loc":1}]}`:     `{"detail":[{"loc":1}]}`,
		"  line one\n  line two  ":   "line one line two",
		strings.Repeat("x", 500):     strings.Repeat("x", maxQuotedChars) + "...",
	} {
		if got := errorMessage([]byte(body)); got != want {
			t.Errorf("errorMessage(%.40q) = %q, want %q", body, got, want)
		}
	}
}

// The declarations' schemas pass through as they are, including a tool with no parameters.
func TestFunctionToolsNoParameters(t *testing.T) {
	got, err := functionTools([]tools.Declaration{{Name: "ping"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `[{"function":{"name":"ping","parameters":{"properties":{},"type":"object"}},"type":"function"}]`; string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}

// A planner keeps no state between turns: concurrent turns on one planner do not mix.
func TestConcurrentTurns(t *testing.T) {
	r := newReplay(t, sse("plain.sse"), sse("plain.sse"), sse("plain.sse"))
	p := newPlanner(t, r.url(), nil)
	errs := make(chan error, 3)
	turns := make([]*fakeTurn, 3)
	for i := range turns {
		turns[i] = &fakeTurn{req: agent.Request{Text: "hi"}}
		go func() { errs <- p.Plan(t.Context(), turns[i]) }()
	}
	for range turns {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, turn := range turns {
		if got := strings.Join(turn.texts(agent.EventChunk), ""); got != "Hello there! 我可以帮你调音量。" {
			t.Errorf("reply = %q", got)
		}
	}
}

// With a time zone, the model is told the date, time and zone, so that it can fill a reminder's
// ISO 8601 time.
func TestToldTheTime(t *testing.T) {
	r := newReplay(t, sse("plain.sse"))
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	p := newPlanner(t, r.url(), func(o *Options) {
		o.Location = shanghai
		o.Now = func() time.Time { return time.Date(2026, 11, 26, 6, 22, 0, 0, time.UTC) }
	})
	if err := p.Plan(t.Context(), &fakeTurn{req: agent.Request{Text: "remind me at 7pm to call mom"}}); err != nil {
		t.Fatal(err)
	}
	msgs := messages(t, r.requests()[0])
	if roles(t, r.requests()[0]) != "system system user" || msgs[1]["content"] != "It is now Thursday, 2026-11-26 14:22 (time zone Asia/Shanghai, UTC+08:00); reminder times are in this zone." {
		t.Errorf("messages = %v", msgs)
	}
}
