package console

import (
	"fmt"
	"io"
	"sync"
)

// SyncWriter serialises writes from the console, the renderer and the hardware panel.
type SyncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewSyncWriter returns a SyncWriter that writes to w.
func NewSyncWriter(w io.Writer) *SyncWriter { return &SyncWriter{w: w} }

func (w *SyncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// Print writes s; like the console's output as a whole, errors are not reported.
func (w *SyncWriter) Print(s string) { io.WriteString(w, s) }

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
