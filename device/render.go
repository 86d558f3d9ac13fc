package device

import (
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/devicectl/devicectl/device/turn"
	"github.com/devicectl/devicectl/internal/term"
	"github.com/devicectl/devicectl/protocol"
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
// A turn's text is shown exactly once, by package turn's rule: if chunks were streamed, "final"
// only finishes the line; if none were, "final" carries the whole reply and is shown.
type Renderer struct {
	out, thoughts io.Writer
	opts          RenderOptions
	log           *slog.Logger

	mu     sync.Mutex
	turn   turn.Assembler // gathers nothing: the text is written as it comes
	failed bool           // a write to out failed; logged once, not per chunk
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

// lineStarter is an output shared with other writers that knows whether its cursor is at the start
// of a line (console.SyncWriter).
type lineStarter interface{ AtLineStart() bool }

// Render shows one message. It is meant to be called in arrival order from one goroutine at a time;
// it is nevertheless safe for concurrent use.
func (r *Renderer) Render(m protocol.AIMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.turn.Add(m.Type, m.Content)
	st.Text, st.Thought = term.Sanitize(st.Text), term.Sanitize(st.Thought) // the server's text: no escapes
	switch {
	case st.Text != "":
		text := st.Text
		// A reply's next sentence starts with the space that joins it to the last; when something
		// else (a status panel) ended the line in between, that space would indent the new line.
		if ls, ok := r.out.(lineStarter); ok && !st.Begin && ls.AtLineStart() {
			text = strings.TrimLeft(text, " ")
		}
		r.write(r.out, text)
	case st.Thought != "" && r.opts.ShowThoughts && r.thoughts != nil:
		if r.opts.Color {
			r.write(r.thoughts, "\x1b[2m"+st.Thought+"\x1b[0m\n")
		} else {
			r.write(r.thoughts, st.Thought+"\n")
		}
	case st.Unknown:
		r.log.Debug("ignoring ai message of unknown type", "type", m.Type)
	}
	if st.End {
		r.writeBytes(r.out, newline)
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
