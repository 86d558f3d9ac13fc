package execload

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// line is a device's side of a line in memory: it answers each request sent with answer(id),
// and records how many requests were outstanding at most.
type line struct {
	requests chan []byte
	answers  chan []byte
	closed   chan struct{}
	once     sync.Once

	mu          sync.Mutex
	outstanding int
	most        int
}

func newLine(t *testing.T, answer func(id string) string) *line {
	l := &line{requests: make(chan []byte, 2*Window), answers: make(chan []byte, 2*Window), closed: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Go(func() {
		// Answers go out Window at a time, once Window requests are in: a load that keeps fewer
		// outstanding is never answered, and fails on recv's silence.
		var ids []string
		for {
			select {
			case req := <-l.requests:
				var m struct{ ID string }
				if err := json.Unmarshal(req, &m); err != nil {
					t.Errorf("the request %s: %v", req, err)
				}
				if ids = append(ids, m.ID); len(ids) < Window {
					continue
				}
				for _, id := range ids {
					l.answers <- []byte(answer(id))
				}
				ids = ids[:0]
			case <-l.closed:
				return
			}
		}
	})
	t.Cleanup(func() { l.close(); wg.Wait() })
	return l
}

func (l *line) close() { l.once.Do(func() { close(l.closed) }) }

func (l *line) send(b []byte) error {
	l.mu.Lock()
	l.outstanding++
	l.most = max(l.most, l.outstanding)
	l.mu.Unlock()
	select {
	case l.requests <- b:
		return nil
	case <-l.closed:
		return errors.New("the line is closed")
	}
}

func (l *line) recv() ([]byte, error) {
	select {
	case b := <-l.answers:
		l.mu.Lock()
		l.outstanding--
		l.mu.Unlock()
		return b, nil
	case <-l.closed:
		return nil, errors.New("the line is closed")
	case <-time.After(10 * time.Second):
		return nil, errors.New("no answer within 10s")
	}
}

func result(id string) string { return `{"jsonrpc":"2.0","id":"` + id + `","result":{}}` }

// Pipeline keeps Window executes outstanding, never more, and returns once all n answers are
// read.
func TestPipeline(t *testing.T) {
	l := newLine(t, result)
	const n = 10 * Window
	if _, err := Pipeline(n, Frame, l.send, l.recv); err != nil {
		t.Fatal(err)
	}
	if l.most != Window {
		t.Errorf("%d executes were outstanding at most, want %d", l.most, Window)
	}
}

// An answer that is an error is not served: Pipeline stops with it.
func TestPipelineRefused(t *testing.T) {
	l := newLine(t, func(id string) string {
		if id == "tool-call-5" {
			return `{"jsonrpc":"2.0","id":"` + id + `","error":{"code":-32002,"message":"busy"}}`
		}
		return result(id)
	})
	_, err := Pipeline(4*Window, Frame, l.send, l.recv)
	if err == nil || !strings.Contains(err.Error(), "-32002") {
		t.Errorf("Pipeline with a busy answer = %v, want the answer that is not a result", err)
	}
}

// A send that fails stops the load with its error, once the reading has stopped.
func TestPipelineSendFails(t *testing.T) {
	l := newLine(t, result)
	sent := 0
	send := func(b []byte) error {
		if sent++; sent == 3 {
			l.close()
			return errors.New("broken pipe")
		}
		return l.send(b)
	}
	if _, err := Pipeline(4*Window, Frame, send, l.recv); err == nil || err.Error() != "broken pipe" {
		t.Errorf("Pipeline with a failing send = %v, want its error", err)
	}
}

func TestFrameAndServed(t *testing.T) {
	var m struct {
		Method string
		ID     string
		Params struct {
			ToolName  string              `json:"tool_name"`
			ToolInput struct{ Level int } `json:"tool_input"`
		}
	}
	if err := json.Unmarshal(Frame(205), &m); err != nil {
		t.Fatal(err)
	}
	if m.Method != "mcp/tool/execute" || m.ID != "tool-call-205" || m.Params.ToolName != "amplify_volume" || m.Params.ToolInput.Level != 3 {
		t.Errorf("Frame(205) = %s", Frame(205))
	}
	for answer, served := range map[string]bool{
		`{"jsonrpc":"2.0","id":"a","result":{}}`:                                true,
		`{"jsonrpc":"2.0","id":"a","result":null}`:                              true,
		`{"jsonrpc":"2.0","id":"a","error":{"code":-32002,"message":"busy"}}`:   false,
		`{"jsonrpc":"2.0","method":"mcp/ai/message","params":{"type":"final"}}`: false,
		`not json`: false,
	} {
		if err := Served([]byte(answer)); (err == nil) != served {
			t.Errorf("Served(%s) = %v, want served %t", answer, err, served)
		}
	}
}
