package a2a

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/llm"
	"github.com/devicectl/devicectl/tools"
)

// slowModel is an OpenAI-compatible endpoint that holds every request until the test lets one
// answer, as a model that takes seconds to its first word does.
type slowModel struct {
	srv    *httptest.Server
	asked  chan struct{} // a value as each request arrives
	answer chan struct{} // a value lets one request answer
	closed chan struct{} // closed at cleanup: requests still held end unanswered
}

// slowReply is the streamed answer: "好的", then the end.
const slowReply = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"slow","choices":[{"index":0,"delta":{"role":"assistant","content":"好的"},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"slow","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: [DONE]

`

func newSlowModel(t *testing.T) *slowModel {
	m := &slowModel{asked: make(chan struct{}, 16), answer: make(chan struct{}), closed: make(chan struct{})}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) //nolint:errcheck // only its arrival matters
		m.asked <- struct{}{}
		select {
		case <-m.answer:
		case <-m.closed:
			return
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, slowReply) //nolint:errcheck // the test reads the outcome elsewhere
	}))
	t.Cleanup(func() {
		close(m.closed)
		m.srv.Close()
	})
	return m
}

// newLLMAgent is the real agent with the llm planner on model, the server's own calculate tool
// (so that a turn runs without a device) and the turn limit maxTurns.
func newLLMAgent(t *testing.T, model *slowModel, maxTurns int) *agent.Agent {
	t.Helper()
	p, err := llm.New(&llm.Options{BaseURL: model.srv.URL + "/v1", Model: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	calc, err := tools.Func(tools.Declaration{Name: "calculate", Description: "Evaluate an arithmetic expression.", MainType: tools.Local, SubType: tools.Query},
		func(_ context.Context, in struct {
			Expr string `json:"expr"`
		}) (string, error) {
			return in.Expr, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	local := tools.NewRegistry()
	if err := local.Add(calc); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(&agent.Options{Planner: p, Local: local, MaxTurns: maxTurns})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// streamData posts body and sends the data of each SSE event it answers on the channel, closed
// when the answer ends. The request ends with the test.
func streamData(t *testing.T, url, body string) <-chan string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	ch := make(chan string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- data
			}
		}
	}()
	t.Cleanup(func() { <-done })
	return ch
}

// nextData is the next event's data; it fails the test if none comes within wait, the time a
// model may take: the events asked for here must come without it.
func nextData(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	const wait = 10 * time.Second
	select {
	case d, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return d
	case <-time.After(wait):
		t.Fatalf("%s: no event within %v while the model thinks", what, wait)
	}
	return ""
}

// TestA2AStreamStartsBeforeModel: with the llm planner, a streaming caller gets the task and its
// working status at once, while the model has not said a word; the reply follows when it does.
func TestA2AStreamStartsBeforeModel(t *testing.T) {
	model := newSlowModel(t)
	ts := newTestServer(t, newLLMAgent(t, model, 0), "", nil)
	cases := []struct {
		path, body                  string
		submitted, working, replied string
	}{
		{PathJSONRPC, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"算一下"}]}}}`,
			`"state":"TASK_STATE_SUBMITTED"`, `"state":"TASK_STATE_WORKING"`, `"state":"TASK_STATE_COMPLETED"`},
		{PathJSONRPCv03, `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"算一下"}]}}}`,
			`"state":"submitted"`, `"state":"working"`, `"state":"completed"`},
	}
	for _, tc := range cases {
		events := streamData(t, ts.URL+tc.path, tc.body)
		if d := nextData(t, events, tc.path+" first event"); !strings.Contains(d, tc.submitted) {
			t.Errorf("%s: first event %s, want the task %s", tc.path, d, tc.submitted)
		}
		if d := nextData(t, events, tc.path+" second event"); !strings.Contains(d, tc.working) {
			t.Errorf("%s: second event %s, want %s", tc.path, d, tc.working)
		}
		<-model.asked // the planner is waiting for the model, which has not answered
		model.answer <- struct{}{}
		var rest []string
		for d := range events {
			rest = append(rest, d)
		}
		if len(rest) == 0 || !strings.Contains(rest[len(rest)-1], tc.replied) || !strings.Contains(strings.Join(rest, ""), "好的") {
			t.Errorf("%s: after the model answered: %s, want the reply and %s", tc.path, rest, tc.replied)
		}
	}
}

// TestA2ATurnLimit: past agent.limits.turns a message is refused at once with -32603 and details
// naming the key and the limit, whether another front door holds the turn or an A2A execution
// does; the seed route likewise. Once the turn ends, messages run again.
func TestA2ATurnLimit(t *testing.T) {
	model := newSlowModel(t)
	a := newLLMAgent(t, model, 1)
	ts := newTestServer(t, a, "", nil)
	const send = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"算一下"}]}}}`
	wantDetails := turnLimitDetails(1)
	refused := func(what string) {
		t.Helper()
		res := postRaw(t, ts.URL+PathJSONRPC, strings.Replace(send, "%s", what, 1))
		if a := decodeAnswer(t, what, res); a.Error == nil || a.Error.Code != -32603 || a.details() != wantDetails {
			t.Errorf("%s: %s\nwant -32603 with details %q", what, res.body, wantDetails)
		}
	}

	// The console (any caller of Agent.Turn) holds the one turn.
	var wg sync.WaitGroup
	started := make(chan struct{})
	var last agent.Event
	wg.Go(func() {
		for e := range a.Turn(t.Context(), agent.Request{Text: "算一下"}) {
			if e.Kind == agent.EventStarted {
				close(started)
			}
			last = e
		}
	})
	<-started
	refused("agent-refuses")
	res := postRaw(t, ts.URL+PathSeedSend, `{"jsonrpc":"2.0","id":"r1","method":"tasks/send","params":{"id":"seed-1","message":{"role":"user","parts":[{"type":"text","text":"算一下"}]}}}`)
	var seed struct {
		Error *struct {
			Code int `json:"code"`
			Data struct {
				Details string `json:"details"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.body), &seed); err != nil || seed.Error == nil || seed.Error.Code != -32603 ||
		!strings.Contains(seed.Error.Data.Details, "agent.limits.turns") {
		t.Errorf("seed route past the limit: %s, want -32603 naming agent.limits.turns", res.body)
	}
	<-model.asked
	model.answer <- struct{}{}
	wg.Wait()
	if last.Kind != agent.EventFinal {
		t.Fatalf("the console's turn ended with %v %v", last.Kind, last.Err)
	}

	// An A2A stream holds it: the next execution is refused.
	var events <-chan string
	whenFree(t, func() bool {
		events = streamData(t, ts.URL+PathJSONRPC, strings.Replace(send, `"SendMessage"`, `"SendStreamingMessage"`, 1))
		if d := nextData(t, events, "the stream holding the turn"); strings.Contains(d, "agent.limits.turns") {
			for range events {
			}
			return false
		}
		return true
	})
	<-model.asked
	refused("stream-holds-it")
	model.answer <- struct{}{}
	for range events {
	}

	// The turn is over: a message runs.
	whenFree(t, func() bool {
		done := make(chan string, 1)
		go func() {
			resp, err := http.Post(ts.URL+PathJSONRPC, "application/json", strings.NewReader(strings.Replace(send, "%s", "after", 1)))
			if err != nil {
				done <- err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			done <- string(b)
		}()
		select {
		case <-model.asked:
			model.answer <- struct{}{}
			if body := <-done; !strings.Contains(body, `"state":"TASK_STATE_COMPLETED"`) {
				t.Errorf("after the turns ended: %s, want a completed task", body)
			}
			return true
		case body := <-done:
			if !strings.Contains(body, "agent.limits.turns") {
				t.Fatalf("after the turns ended: %s, want a completed task", body)
			}
			return false
		}
	})
}

// whenFree runs try, which reports whether its message ran: a turn gives its slot back before
// its answer goes out, and a2a-go's limiter is at twice the limit, so a message sent as soon as
// the previous answer is in is never refused for it.
func whenFree(t *testing.T, try func() bool) {
	t.Helper()
	if !try() {
		t.Fatal("refused for the turn limit right after the turn that held it ended")
	}
}
