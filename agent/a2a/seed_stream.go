package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// serveSeedStream answers POST /tasks/send/stream as SSE: status working once a2a-go has taken
// the message, the reply's pieces as artifact events, then the final status. A request refused
// before that (bad params, a limit, a busy task) gets a plain JSON-RPC error instead.
func (h *Handler) serveSeedStream(w http.ResponseWriter, r *http.Request) {
	env, err := readEnvelope(w, r)
	if err == nil && env.Method != methodStream {
		err = withDetails(a2a.ErrMethodNotFound, fmt.Sprintf("Method not found: %q (%s serves %s)", env.Method, PathSeedStream, methodStream))
	}
	var run *seedRun
	if err == nil {
		var p *seedParams
		if p, err = parseSendParams(env.Params); err == nil {
			run, err = h.startSeedTask(r.Context(), p)
		}
	}
	if err != nil {
		writeRPCError(w, http.StatusOK, env.ID, seedError(err))
		return
	}
	// Until a2a-go has taken the message the stream is followed whatever the client does, so
	// that a refusal puts the task back; from then on the turn goes on without the client.
	ctx, stop := context.WithCancel(withSeedCall(context.WithoutCancel(r.Context()), &seedCall{}))
	defer stop()
	s := &seedStream{w: w, id: string(run.task.ID), index: len(run.task.Artifacts)}
	var end *a2a.TaskStatus
	for ev, err := range h.rh.SendStreamingMessage(ctx, run.request()) {
		if err != nil {
			if !s.started {
				h.putBack(ctx, run)
				writeRPCError(w, http.StatusOK, env.ID, seedError(err))
				return
			}
			h.o.Logger.Warn("a2a: seed stream", "task", s.id, "err", err)
			break
		}
		if !s.started {
			s.start(run.task.Status.Timestamp)
			defer context.AfterFunc(r.Context(), stop)()
		}
		if end = s.event(ev); end != nil || s.err != nil {
			break
		}
	}
	if !s.started || s.err != nil || r.Context().Err() != nil {
		return
	}
	// The final status as stored, with the time it was stored at.
	if t, err := h.seedGet(ctx, run.task.ID); err == nil && t.Status.State.Terminal() {
		end = &t.Status
	}
	if end != nil {
		s.end(end)
	}
}

// seedStream writes a2a-go's events of one turn as seed 004's SSE.
type seedStream struct {
	w       http.ResponseWriter
	id      string
	index   int // the reply artifact's place in the task's artifacts
	started bool
	text    strings.Builder // the reply so far, as the client puts it together
	closed  bool            // a piece with lastChunk went out
	err     error           // a write failed: the client is gone
}

// start writes the headers and the working status.
func (s *seedStream) start(at *time.Time) {
	s.w.Header().Set("Content-Type", "text/event-stream")
	s.w.Header().Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
	s.started = true
	s.emit("status", sseStatusEvent{ID: s.id, Status: sseStatus{State: stateWorking, Timestamp: seedTime(at)}})
}

func (s *seedStream) emit(event string, v any) {
	if s.err != nil {
		return
	}
	b, _ := json.Marshal(v) // our own types
	if _, s.err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, b); s.err == nil {
		if f, ok := s.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// event writes ev; it returns the task's status once it is final.
func (s *seedStream) event(ev a2a.Event) *a2a.TaskStatus {
	switch ev := ev.(type) {
	case *a2a.TaskArtifactUpdateEvent:
		s.piece(partsText(ev.Artifact.Parts), ev.Append, ev.LastChunk)
	case *a2a.TaskStatusUpdateEvent:
		if ev.Status.State.Terminal() {
			return &ev.Status
		}
	case *a2a.Task: // a2a-go's own end of an execution that failed
		if ev.Status.State.Terminal() {
			return &ev.Status
		}
	}
	return nil
}

func (s *seedStream) piece(text string, appendTo, last bool) {
	if !appendTo {
		s.text.Reset()
	}
	s.text.WriteString(text)
	s.closed = last
	s.emit("artifact", sseArtifactEvent{ID: s.id, Artifact: sseArtifact{
		Parts: []seedPart{{Type: "text", Text: text}}, Index: s.index, Append: appendTo, LastChunk: last,
	}})
}

// end writes the final status. A completed reply's artifact ends with lastChunk first (its rest,
// often "", or the whole reply when the pieces were not it), so that a client knows the text it
// put together is whole; a failed or canceled one has no lastChunk: the artifact is not kept.
func (s *seedStream) end(st *a2a.TaskStatus) {
	ev := sseStatusEvent{ID: s.id, Status: sseStatus{State: seedState(st.State), Timestamp: seedTime(st.Timestamp)}, Final: true}
	if st.State != a2a.TaskStateCompleted {
		ev.Status.Message = seedMessageOf(st.Message) // why it failed or stopped
	} else if text, streamed := partsTextOf(st.Message), s.text.String(); !s.closed && text != "" {
		if streamed != "" && strings.HasPrefix(text, streamed) {
			s.piece(text[len(streamed):], true, true)
		} else {
			s.piece(text, false, true)
		}
	}
	s.emit("status", ev)
}

func partsTextOf(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	return partsText(m.Parts)
}
