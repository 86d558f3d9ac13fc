package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/devicectl/devicectl/agent"
)

// Seed 004's task states.
const (
	stateSubmitted     = "submitted"
	stateWorking       = "working"
	stateInputRequired = "input-required"
	stateCompleted     = "completed"
	stateCanceled      = "canceled"
	stateFailed        = "failed"
)

// Seed 004's methods, one endpoint each; /tasks/send also answers tasks/get and tasks/cancel so
// that a seed-route client can follow and stop its tasks.
const (
	methodSend   = "tasks/send"
	methodStream = "tasks/send/stream"
	methodGet    = "tasks/get"
	methodCancel = "tasks/cancel"
)

// The seed's shapes, field order as the seed prints them.
type (
	seedPart struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	seedMessage struct {
		Role  string     `json:"role"`
		Parts []seedPart `json:"parts"`
	}
	seedStatus struct {
		State     string       `json:"state"`
		Message   *seedMessage `json:"message"`
		Timestamp string       `json:"timestamp"`
	}
	seedArtifact struct {
		Parts []seedPart `json:"parts"`
	}
	seedTask struct {
		ID        string         `json:"id"`
		SessionID string         `json:"sessionId"`
		Status    seedStatus     `json:"status"`
		Artifacts []seedArtifact `json:"artifacts"`
		History   []seedMessage  `json:"history"`
		Metadata  map[string]any `json:"metadata"`
	}
	// The SSE events of tasks/send/stream.
	sseStatus struct {
		State     string       `json:"state"`
		Message   *seedMessage `json:"message,omitempty"`
		Timestamp string       `json:"timestamp"`
	}
	sseStatusEvent struct {
		ID     string    `json:"id"`
		Status sseStatus `json:"status"`
		Final  bool      `json:"final"`
	}
	// sseArtifact is the reply as it streams, a piece per event, in the shape of the A2A draft the
	// seed's routes come from: index is the artifact's place in the task's artifacts; append
	// false starts (or replaces) its text, true adds to it; lastChunk true ends it.
	sseArtifact struct {
		Parts     []seedPart `json:"parts"`
		Index     int        `json:"index"`
		Append    bool       `json:"append"`
		LastChunk bool       `json:"lastChunk"`
	}
	sseArtifactEvent struct {
		ID       string      `json:"id"`
		Artifact sseArtifact `json:"artifact"`
	}
)

func textMessage(role, text string) *seedMessage {
	return &seedMessage{Role: role, Parts: []seedPart{{Type: "text", Text: text}}}
}

// seedParams are tasks/send's params once checked.
type seedParams struct {
	ID, SessionID string
	Message       seedMessage
	Text          string
	HistoryLength *int
	Metadata      map[string]any
	MAC, UserID   string
}

func newRPCError(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: messages[code], Data: &rpcErrorData{Details: fmt.Sprintf(format, args...)}}
}

// field decodes one optional member of params; a JSON null counts as absent.
func field[T any](obj map[string]json.RawMessage, name, what string) (v T, present bool, e *rpcError) {
	raw, ok := obj[name]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), nullID) {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, true, newRPCError(codeInvalidParams, "%s must be %s, got %s", name, what, raw)
	}
	return v, true, nil
}

func paramsObject(raw json.RawMessage) (map[string]json.RawMessage, *rpcError) {
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), nullID) {
		return nil, newRPCError(codeInvalidParams, "Missing required parameter: params")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, newRPCError(codeInvalidParams, "params must be an object, got %s", raw)
	}
	return obj, nil
}

// parseSendParams checks tasks/send's params and names the first problem.
func parseSendParams(raw json.RawMessage) (*seedParams, *rpcError) {
	obj, e := paramsObject(raw)
	if e != nil {
		return nil, e
	}
	p := &seedParams{}
	var present bool
	if p.ID, _, e = field[string](obj, "id", "a string"); e != nil {
		return nil, e
	}
	if p.SessionID, _, e = field[string](obj, "sessionId", "a string"); e != nil {
		return nil, e
	}
	var n int
	if n, present, e = field[int](obj, "historyLength", "a non-negative integer"); e != nil {
		return nil, e
	}
	if present {
		if n < 0 {
			return nil, newRPCError(codeInvalidParams, "historyLength must be a non-negative integer, got %d", n)
		}
		p.HistoryLength = &n
	}
	if p.Metadata, _, e = field[map[string]any](obj, "metadata", "an object"); e != nil {
		return nil, e
	}
	var err error
	if p.MAC, err = metaString("mac", p.Metadata); err != nil {
		return nil, newRPCError(codeInvalidParams, "%v", err)
	}
	if p.UserID, err = metaString("user_id", p.Metadata); err != nil {
		return nil, newRPCError(codeInvalidParams, "%v", err)
	}

	msg, present, e := field[map[string]json.RawMessage](obj, "message", "an object")
	if e != nil {
		return nil, e
	}
	if !present {
		return nil, newRPCError(codeInvalidParams, "Missing required parameter: message")
	}
	role, present, e := field[string](msg, "role", "a string")
	switch {
	case e != nil:
		e.Data.Details = "message." + e.Data.Details
		return nil, e
	case !present:
		return nil, newRPCError(codeInvalidParams, "Missing required parameter: message.role")
	case role != "user":
		return nil, newRPCError(codeInvalidParams, `message.role must be "user", got %q`, role)
	}
	parts, present, e := field[[]map[string]json.RawMessage](msg, "parts", "an array of objects")
	switch {
	case e != nil:
		e.Data.Details = "message." + e.Data.Details
		return nil, e
	case !present || len(parts) == 0:
		return nil, newRPCError(codeInvalidParams, "Missing required parameter: message.parts")
	}
	p.Message.Role = role
	var texts []string
	for i, part := range parts {
		typ, _, e := field[string](part, "type", "a string")
		if e != nil {
			return nil, newRPCError(codeInvalidParams, "message.parts[%d].type must be a string", i)
		}
		if typ != "text" {
			return nil, newRPCError(codeInvalidParams, `Unsupported part type %q in message.parts[%d]: only "text" parts are accepted`, typ, i)
		}
		text, present, e := field[string](part, "text", "a string")
		if e != nil {
			return nil, newRPCError(codeInvalidParams, "message.parts[%d].text must be a string", i)
		}
		if !present {
			return nil, newRPCError(codeInvalidParams, "Missing required parameter: message.parts[%d].text", i)
		}
		p.Message.Parts = append(p.Message.Parts, seedPart{Type: "text", Text: text})
		if strings.TrimSpace(text) != "" {
			texts = append(texts, text)
		}
	}
	if len(texts) == 0 {
		return nil, newRPCError(codeInvalidParams, "The message has no text: every message.parts[].text is empty")
	}
	p.Text = strings.Join(texts, "\n")
	return p, nil
}

// parseTaskIDParams checks the params of tasks/get and tasks/cancel.
func parseTaskIDParams(raw json.RawMessage) (id string, historyLength *int, e *rpcError) {
	obj, e := paramsObject(raw)
	if e != nil {
		return "", nil, e
	}
	id, present, e := field[string](obj, "id", "a string")
	if e != nil {
		return "", nil, e
	}
	if !present || id == "" {
		return "", nil, newRPCError(codeInvalidParams, "Missing required parameter: id")
	}
	n, present, e := field[int](obj, "historyLength", "a non-negative integer")
	if e != nil {
		return "", nil, e
	}
	if present {
		if n < 0 {
			return "", nil, newRPCError(codeInvalidParams, "historyLength must be a non-negative integer, got %d", n)
		}
		historyLength = &n
	}
	return id, historyLength, nil
}

// serveSeedSend answers POST /tasks/send: tasks/send runs a turn and answers the task once the
// turn is over; tasks/get and tasks/cancel read and stop tasks.
func (h *Handler) serveSeedSend(w http.ResponseWriter, r *http.Request) {
	req, err := readEnvelope(w, r)
	id := req.ID
	if err != nil {
		writeRPCError(w, http.StatusOK, id, seedError(err))
		return
	}
	var e *rpcError
	var result any
	switch req.Method {
	case methodSend:
		var p *seedParams
		if p, e = parseSendParams(req.Params); e == nil {
			result, e = h.runSeedTask(r.Context(), p, nil)
		}
	case methodGet, methodCancel:
		taskID, hl, pe := parseTaskIDParams(req.Params)
		if e = pe; e == nil {
			var t *seedTask
			if req.Method == methodGet {
				t, e = h.seedTask(r.Context(), taskID, hl)
			} else {
				t, e = h.cancelSeedTask(r.Context(), taskID)
			}
			if e == nil {
				result = trimHistory(t, hl)
			}
		}
	default:
		e = newRPCError(codeNoMethod, "Method not found: %q (%s serves %s, %s and %s)", req.Method, PathSeedSend, methodSend, methodGet, methodCancel)
	}
	if e != nil {
		writeRPCError(w, http.StatusOK, id, e)
		return
	}
	writeJSON(w, http.StatusOK, rpcResponse{JSONRPC: "2.0", ID: id, Result: result})
}

// serveSeedStream answers POST /tasks/send/stream as SSE: status working at once, the reply's
// pieces as artifact events, then the final status. A request refused before its task is stored
// (bad params, a limit, a busy task) gets a plain JSON-RPC error instead.
func (h *Handler) serveSeedStream(w http.ResponseWriter, r *http.Request) {
	req, err := readEnvelope(w, r)
	id := req.ID
	var e *rpcError
	if err != nil {
		e = seedError(err)
	}
	if e == nil && req.Method != methodStream {
		e = newRPCError(codeNoMethod, "Method not found: %q (%s serves %s)", req.Method, PathSeedStream, methodStream)
	}
	var p *seedParams
	if e == nil {
		p, e = parseSendParams(req.Params)
	}
	if e != nil {
		writeRPCError(w, http.StatusOK, id, e)
		return
	}
	flusher, _ := w.(http.Flusher)
	started := false
	emit := func(event string, v any) {
		if !started {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		b, _ := json.Marshal(v) // our own types
		// A client that went away makes writes fail; the turn goes on and its task is stored.
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	if _, e := h.runSeedTask(r.Context(), p, emit); e != nil && !started {
		writeRPCError(w, http.StatusOK, id, e)
	}
}

// serveSeedGet answers GET /tasks/{id} with the bare task, or 404 and a -32602.
func (h *Handler) serveSeedGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	t, e := h.seedTask(r.Context(), id, nil)
	if e != nil {
		status := http.StatusInternalServerError
		if e.Code == codeInvalidParams {
			status = http.StatusNotFound
		}
		writeRPCError(w, status, nil, e)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// seedTask reads a task through the request handler the A2A paths use (its GetTask, with
// historyLength trimming the history alike), in the seed's shape.
func (h *Handler) seedTask(ctx context.Context, id string, historyLength *int) (*seedTask, *rpcError) {
	t, err := h.rh.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id), HistoryLength: historyLength})
	if errors.Is(err, a2a.ErrTaskNotFound) {
		return nil, seedError(withDetails(err, unknownTaskDetails(id)))
	}
	if err != nil {
		return nil, newRPCError(codeInternal, "Could not read task %s: %v", id, err)
	}
	return seedView(t), nil
}

func trimHistory(t *seedTask, n *int) *seedTask {
	if n == nil || len(t.History) <= *n {
		return t
	}
	c := *t
	c.History = t.History[len(t.History)-*n:]
	return &c
}

// runSeedTask runs one tasks/send: the task is stored working, then with its outcome. emit,
// when not nil, streams it: headers and the working status go out as soon as the task is
// stored, before the planner has said anything, and a turn the agent refuses for want of a
// device ends the task failed, with the reason. Without emit the turn's first event is awaited
// before anything is stored, so that such a refusal is a -32602 and stores nothing.
func (h *Handler) runSeedTask(ctx context.Context, p *seedParams, emit func(event string, v any)) (*seedTask, *rpcError) {
	if e := h.checkMessageSize(&p.Message); e != nil {
		return nil, e
	}
	if p.ID == "" {
		p.ID = h.o.NewID()
	}
	if p.SessionID == "" {
		p.SessionID = h.o.NewID()
	}

	// The turn runs under the handler's lifetime, not the request's: a client that hangs up
	// does not cut the task short. tasks/cancel and Close stop it.
	turnCtx, cancel := context.WithCancel(h.closing)
	defer cancel()
	run, err := h.exec.turns.start(p.ID, cancel)
	switch {
	case errors.Is(err, errTurnBusy):
		return nil, newRPCError(codeInvalidParams, "Task %s is still working; wait for it or cancel it", p.ID)
	case err != nil:
		return nil, newRPCError(codeInternal, "The server is shutting down")
	}
	defer h.exec.turns.finish(p.ID, run)

	// Read with the id claimed, so that no other send changes the task in between.
	prior, version, err := h.loadSeedTask(ctx, p.ID)
	held := 0
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
		prior = nil
	case err != nil:
		return nil, newRPCError(codeInternal, "Could not read task %s: %v", p.ID, err)
	case prior.SessionID != p.SessionID:
		return nil, newRPCError(codeInvalidParams, "Task %s belongs to session %s, not %s", p.ID, prior.SessionID, p.SessionID)
	case prior.Status.State == stateSubmitted || prior.Status.State == stateWorking:
		// Running on the A2A routes: the tasks are one table.
		return nil, newRPCError(codeInvalidParams, "Task %s is still working; wait for it or cancel it", p.ID)
	default:
		held = len(prior.History)
	}
	if e := h.checkHistoryRoom(p.ID, held); e != nil {
		return nil, e
	}

	req := agent.Request{Text: p.Text, MAC: p.MAC, UserID: p.UserID, SessionID: p.SessionID, TaskID: p.ID}
	var events iter.Seq[agent.Event]
	if emit == nil {
		t, err := startTurn(turnCtx, h.o.Runner, req)
		if err != nil {
			return nil, seedError(refusal(err, h.exec.maxTurns))
		}
		defer t.stop()
		events = t.events()
	} else {
		events = h.o.Runner.Turn(turnCtx, req)
	}

	task := &seedTask{ID: p.ID, SessionID: p.SessionID, Artifacts: []seedArtifact{}, History: []seedMessage{}, Metadata: p.Metadata}
	if prior != nil {
		task.Artifacts, task.History = prior.Artifacts, prior.History
		if task.Metadata == nil {
			task.Metadata = prior.Metadata
		}
	}
	if task.Metadata == nil {
		task.Metadata = map[string]any{}
	}
	task.History = append(task.History, p.Message)
	at := h.o.Now()
	task.Status = seedStatus{State: stateWorking, Timestamp: stamp(at)}
	if version, err = h.storeSeedTask(ctx, task, at, version); err != nil {
		return nil, newRPCError(codeInternal, "Could not store task %s: %v", p.ID, err)
	}
	if emit != nil {
		emit("status", sseStatusEvent{ID: task.ID, Status: sseStatus{State: stateWorking, Timestamp: task.Status.Timestamp}})
	}

	// The reply streams into the artifact the task will hold, a piece per chunk; the final's
	// piece carries lastChunk, so that a client knows the text it put together is whole.
	index := len(task.Artifacts)
	piece := func(text string, appendTo, last bool) {
		if emit != nil {
			emit("artifact", sseArtifactEvent{ID: task.ID, Artifact: sseArtifact{
				Parts: []seedPart{{Type: "text", Text: text}}, Index: index, Append: appendTo, LastChunk: last,
			}})
		}
	}
	var reply strings.Builder
	final := seedStatus{State: stateFailed, Message: textMessage("agent", errNoFinal.Error())}
	for ev := range events {
		switch ev.Kind {
		case agent.EventChunk:
			if ev.Text == "" {
				continue
			}
			piece(ev.Text, reply.Len() > 0, false)
			reply.WriteString(ev.Text)
		case agent.EventFinal:
			streamed := reply.String()
			text := ev.Text
			if text == "" {
				text = streamed
			}
			switch {
			case text == "":
			case streamed != "" && strings.HasPrefix(text, streamed):
				piece(text[len(streamed):], true, true) // often "": the chunks were the whole reply
			default:
				piece(text, false, true) // a final that is not the chunks' sum replaces them
			}
			final = seedStatus{State: stateCompleted, Message: textMessage("agent", text)}
			if text != "" {
				task.Artifacts = append(task.Artifacts, seedArtifact{Parts: []seedPart{{Type: "text", Text: text}}})
				task.History = append(task.History, *final.Message)
			}
		case agent.EventError:
			switch {
			case run.canceled():
				final = seedStatus{State: stateCanceled, Message: textMessage("agent", "The task was canceled")}
			case h.closing.Err() != nil:
				final = seedStatus{State: stateFailed, Message: textMessage("agent", "The server is shutting down")}
			default:
				why := ev.Err.Error()
				if details, ok := deviceDetails(ev.Err); ok {
					why = details
				}
				final = seedStatus{State: stateFailed, Message: textMessage("agent", why)}
			}
		}
	}
	at = h.o.Now()
	final.Timestamp = stamp(at)
	task.Status = final
	// Stored even when the client has gone: the task outlives its request.
	if _, err := h.storeSeedTask(context.WithoutCancel(ctx), task, at, version); err != nil {
		h.o.Logger.Error("a2a: storing a finished task", "task", task.ID, "err", err)
		return nil, newRPCError(codeInternal, "Could not store task %s: %v", task.ID, err)
	}
	if emit != nil {
		ev := sseStatusEvent{ID: task.ID, Status: sseStatus{State: final.State, Timestamp: final.Timestamp}, Final: true}
		if final.State != stateCompleted {
			ev.Status.Message = final.Message // why it failed or stopped
		}
		emit("status", ev)
	}
	return trimHistory(task, p.HistoryLength), nil
}

// cancelSeedTask stops a running task and answers it once stored canceled; a finished task
// cannot be canceled.
func (h *Handler) cancelSeedTask(ctx context.Context, id string) (*seedTask, *rpcError) {
	run := h.exec.turns.cancel(id)
	if run != nil {
		select {
		case <-run.done:
		case <-ctx.Done():
			return nil, newRPCError(codeInternal, "Gave up waiting for task %s to stop: %v", id, ctx.Err())
		}
	}
	t, e := h.seedTask(ctx, id, nil)
	if e != nil {
		return nil, e
	}
	if run == nil || t.Status.State != stateCanceled {
		return nil, newRPCError(codeInvalidParams, "Task %s is %s and cannot be canceled", id, t.Status.State)
	}
	return t, nil
}
