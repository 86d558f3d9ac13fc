package console

import (
	"fmt"
	"io"
	"sync"
)

// SyncWriter serialises writes from the console, the renderer and the hardware panel.
type SyncWriter struct {
	mu      sync.Mutex
	w       io.Writer
	midLine bool // the last byte written was not a newline
}

// NewSyncWriter returns a SyncWriter that writes to w.
func NewSyncWriter(w io.Writer) *SyncWriter { return &SyncWriter{w: w} }

func (w *SyncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) > 0 {
		w.midLine = p[len(p)-1] != '\n'
	}
	return w.w.Write(p)
}

// AtLineStart reports whether the next write starts a line: nothing was written yet, or the last
// write ended one. The renderer asks, so that a reply the panel broke off does not go on with the
// space that separated its sentences.
func (w *SyncWriter) AtLineStart() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.midLine
}

// Print writes s; like the console's output as a whole, errors are not reported.
func (w *SyncWriter) Print(s string) { io.WriteString(w, s) }

// PrintBlock writes s, a block of whole lines, starting a new line first if another writer (a
// reply being streamed) left one open.
func (w *SyncWriter) PrintBlock(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.midLine {
		s = "\n" + s
	}
	if len(s) > 0 {
		w.midLine = s[len(s)-1] != '\n'
	}
	io.WriteString(w.w, s)
}

// Printf writes a formatted line, as Print.
func (w *SyncWriter) Printf(format string, args ...any) { fmt.Fprintf(w, format, args...) }

// swap makes w the writer written to, between two writes, and returns the one before.
func (w *SyncWriter) swap(to io.Writer) io.Writer {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.w
	w.w = to
	return old
}
