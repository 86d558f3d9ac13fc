package a2a

import (
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Seed 004's shapes, field order as the seed prints them, and how an A2A task reads in them:
// a seed task is a view of an a2a.Task in the one task table.

// Seed 004's task states.
const (
	stateSubmitted     = "submitted"
	stateWorking       = "working"
	stateInputRequired = "input-required"
	stateCompleted     = "completed"
	stateCanceled      = "canceled"
	stateFailed        = "failed"
)

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

// seedStates maps the seed's task states to A2A's.
var seedStates = map[string]a2a.TaskState{
	stateSubmitted:     a2a.TaskStateSubmitted,
	stateWorking:       a2a.TaskStateWorking,
	stateInputRequired: a2a.TaskStateInputRequired,
	stateCompleted:     a2a.TaskStateCompleted,
	stateCanceled:      a2a.TaskStateCanceled,
	stateFailed:        a2a.TaskStateFailed,
}

// seedState is the seed's name of an A2A state; those the seed lacks read as the nearest.
func seedState(s a2a.TaskState) string {
	for name, st := range seedStates {
		if st == s {
			return name
		}
	}
	switch s {
	case a2a.TaskStateAuthRequired:
		return stateInputRequired
	case a2a.TaskStateRejected:
		return stateFailed
	}
	return stateSubmitted
}

// seedTime is a seed timestamp.
func seedTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func seedParts(parts []*a2a.Part) []seedPart {
	out := make([]seedPart, 0, len(parts))
	for _, p := range parts {
		if p != nil {
			out = append(out, seedPart{Type: "text", Text: p.Text()})
		}
	}
	return out
}

func seedMessageOf(m *a2a.Message) *seedMessage {
	if m == nil {
		return nil
	}
	role := "agent"
	if m.Role == a2a.MessageRoleUser {
		role = "user"
	}
	return &seedMessage{Role: role, Parts: seedParts(m.Parts)}
}

// transcript is the task's messages as the seed lists them: the history, then the reply of a
// completed turn. A2A keeps that reply as the status message (a2a-go moves it into the history
// when the next status replaces it); a task stored before the seed routes shared the table
// lists it in both, so it is added only after a message of the user's.
func transcript(t *a2a.Task) []*a2a.Message {
	h := t.History
	if m := t.Status.Message; m != nil && t.Status.State == a2a.TaskStateCompleted &&
		(len(h) == 0 || h[len(h)-1] == nil || h[len(h)-1].Role == a2a.MessageRoleUser) {
		h = append(h[:len(h):len(h)], m)
	}
	return h
}

// seedView is the seed's shape of a task; historyLength, when set, keeps the last messages.
// An artifact's pieces read as one text, the reply they make up.
func seedView(t *a2a.Task, historyLength *int) *seedTask {
	st := &seedTask{ID: string(t.ID), SessionID: t.ContextID, Artifacts: []seedArtifact{}, History: []seedMessage{},
		Metadata: t.Metadata}
	if st.Metadata == nil {
		st.Metadata = map[string]any{}
	}
	st.Status = seedStatus{State: seedState(t.Status.State), Message: seedMessageOf(t.Status.Message), Timestamp: seedTime(t.Status.Timestamp)}
	for _, a := range t.Artifacts {
		if a != nil {
			st.Artifacts = append(st.Artifacts, seedArtifact{Parts: []seedPart{{Type: "text", Text: partsText(a.Parts)}}})
		}
	}
	history := transcript(t)
	if historyLength != nil && len(history) > *historyLength {
		history = history[len(history)-*historyLength:]
	}
	for _, m := range history {
		if m != nil {
			st.History = append(st.History, *seedMessageOf(m))
		}
	}
	return st
}

// partsText is the text of parts, joined.
func partsText(parts []*a2a.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p != nil {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}
