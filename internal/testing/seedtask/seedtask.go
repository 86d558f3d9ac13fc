package seedtask

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Part is a part of a message or an artifact: seed 004 has text parts only.
type Part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Message is a status message.
type Message struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Status is a task's status.
type Status struct {
	State   string   `json:"state"` // submitted, working, input-required, completed, canceled, failed
	Message *Message `json:"message"`
	// Timestamp is when the task entered State, as the server says: RFC 3339 in whole seconds,
	// or "" when it does not say.
	Timestamp string `json:"timestamp"`
}

// Artifact is the reply, or a piece of it.
type Artifact struct {
	Parts []Part `json:"parts"`
}

// Task is a task as tasks/send answers it and GET /tasks/{id} reads it.
type Task struct {
	ID        string     `json:"id"`
	SessionID string     `json:"sessionId"`
	Status    Status     `json:"status"`
	Artifacts []Artifact `json:"artifacts"`
}

// Reply is the text of the task's artifacts.
func (t Task) Reply() string {
	var b strings.Builder
	for _, a := range t.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Why is the text of the task's status message: a failed task's reason.
func (t Task) Why() string {
	var b strings.Builder
	if m := t.Status.Message; m != nil {
		for _, p := range m.Parts {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Request is what Send and Stream send: a user's text for task ID, in session SessionID when it
// is not "", with the request's metadata (mac, user_id) when Metadata is not nil.
type Request struct {
	ID, SessionID string
	Text          string
	Metadata      map[string]string
}

// rpcID is the JSON-RPC id of r's call: not the task's, so that a response echoing the task's id
// in its place is caught.
func (r Request) rpcID() string { return "rpc-" + r.ID }

func (r Request) body(method string) []byte {
	params := map[string]any{"id": r.ID, "message": map[string]any{"role": "user", "parts": []Part{{Type: "text", Text: r.Text}}}}
	if r.SessionID != "" {
		params["sessionId"] = r.SessionID
	}
	if r.Metadata != nil {
		params["metadata"] = r.Metadata
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.rpcID(), "method": method, "params": params})
	return b
}

// post sends a JSON-RPC call of method to base's route of the same name.
func post(ctx context.Context, c *http.Client, base, method string, r Request) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/"+method, bytes.NewReader(r.body(method)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c == nil {
		c = http.DefaultClient
	}
	return c.Do(req)
}

// Send posts tasks/send with r to the server at base (http://ADDR) through c (nil:
// http.DefaultClient) and returns the task it answers: a 200 with the call's id and a result.
func Send(ctx context.Context, c *http.Client, base string, r Request) (Task, error) {
	resp, err := post(ctx, c, base, "tasks/send", r)
	if err != nil {
		return Task{}, err
	}
	defer resp.Body.Close()
	var out struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      any             `json:"id"`
		Result  Task            `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return Task{}, fmt.Errorf("tasks/send %q: %s: %w", r.Text, resp.Status, err)
	}
	if out.Error != nil {
		return Task{}, fmt.Errorf("tasks/send %q: %s", r.Text, out.Error)
	}
	if resp.StatusCode != http.StatusOK {
		return Task{}, fmt.Errorf("tasks/send %q: %s with a result", r.Text, resp.Status)
	}
	if out.JSONRPC != "2.0" || out.ID != r.rpcID() {
		return Task{}, fmt.Errorf(`tasks/send %q: jsonrpc %q, id %#v; want "2.0", %q`, r.Text, out.JSONRPC, out.ID, r.rpcID())
	}
	return out.Result, nil
}

// Get reads task id from GET base/tasks/{id} through c (nil: http.DefaultClient).
func Get(ctx context.Context, c *http.Client, base, id string) (Task, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/tasks/"+id, nil)
	if err != nil {
		return Task{}, err
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return Task{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Task{}, fmt.Errorf("GET /tasks/%s: %s: %w", id, resp.Status, err)
	}
	var task Task
	if err := json.Unmarshal(b, &task); err != nil || task.ID != id {
		return Task{}, fmt.Errorf("GET /tasks/%s: %s %s", id, resp.Status, b)
	}
	return task, nil
}

// Stream posts tasks/send/stream with r to the server at base through c (nil:
// http.DefaultClient) and returns once the first event is out: that event's data line, and the
// stream after it, which the caller reads on or closes.
func Stream(ctx context.Context, c *http.Client, base string, r Request) (first string, rest io.ReadCloser, err error) {
	resp, err := post(ctx, c, base, "tasks/send/stream", r)
	if err != nil {
		return "", nil, err
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			resp.Body.Close()
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return "", nil, fmt.Errorf("tasks/send/stream %q: %s: the stream ended before its first event: %w", r.Text, resp.Status, err)
		}
		if strings.HasPrefix(line, "data:") {
			return line, readCloser{br, resp.Body}, nil
		}
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}
