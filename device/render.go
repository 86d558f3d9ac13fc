package device

import (
	"io"
	"log/slog"
	"sync"
)

// RenderOptions configure a Renderer. The zero value hides thoughts and writes no colour codes.
type RenderOptions struct {
	// ShowThoughts writes "thought" messages to the thoughts writer; otherwise they are dropped.
	ShowThoughts bool
	// Color dims thoughts with ANSI codes; set it only when the thoughts writer is a terminal.
	Color bool
	// Logger receives write errors and unknown message types; nil discards.
	Logger *slog.Logger
}

// Renderer shows the server's mcp/ai/message stream: reply chunks are appended to out as they
// arrive, a "final" ends the turn, thoughts go to a separate writer so they never mix into the reply.
//
// A turn's text is shown exactly once: if chunks were streamed, "final" only finishes the line; if
// none were, "final" carries the whole reply and is shown.
type Renderer struct {
	out, thoughts io.Writer
	opts          RenderOptions
	log           *slog.Logger

	mu       sync.Mutex
	streamed bool // chunks of the current turn have been written
	failed   bool // a write to out failed; logged once, not per chunk
}

// NewRenderer returns a Renderer writing replies to out and, when enabled, thoughts to thoughts.
func NewRenderer(out, thoughts io.Writer, opts *RenderOptions) *Renderer {
	r := &Renderer{out: out, thoughts: thoughts}
	if opts != nil {
		r.opts = *opts
	}
	r.log = r.opts.Logger
	if r.log == nil {
		r.log = discardLogger
	}
	r.log = r.log.With("component", "render")
	return r
}

var newline = []byte{'\n'}

// Render shows one message. It is meant to be called in arrival order from one goroutine at a time;
// it is nevertheless safe for concurrent use.
func (r *Renderer) Render(m AIMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m.Type {
	case MessageChunk:
		if m.Content == "" {
			return
		}
		r.write(r.out, m.Content)
		r.streamed = true
	case MessageFinal:
		if !r.streamed {
			r.write(r.out, m.Content)
		}
		r.writeBytes(r.out, newline)
		r.streamed = false
	case MessageThought:
		if !r.opts.ShowThoughts || r.thoughts == nil || m.Content == "" {
			return
		}
		if r.opts.Color {
			r.write(r.thoughts, "\x1b[2m"+m.Content+"\x1b[0m\n")
		} else {
			r.write(r.thoughts, m.Content+"\n")
		}
	default:
		r.log.Debug("ignoring ai message of unknown type", "type", m.Type)
	}
}

func (r *Renderer) write(w io.Writer, s string) {
	if _, err := io.WriteString(w, s); err != nil {
		r.writeFailed(err)
	}
}

func (r *Renderer) writeBytes(w io.Writer, b []byte) {
	if _, err := w.Write(b); err != nil {
		r.writeFailed(err)
	}
}

func (r *Renderer) writeFailed(err error) {
	if !r.failed {
		r.failed = true
		r.log.Warn("cannot write ai message", "err", err)
	}
}
