// Package tail keeps the end of what a program the device started wrote: a failing program's
// reason is usually in its last lines, and a chatty one must not grow devicectl's memory.
package tail

import "strings"

// Buffer is an io.Writer that keeps the last Max bytes written to it (all of them when Max is 0
// or less). exec.Cmd writes to it from one goroutine and Wait returns after the last write, so
// it needs no lock there; it is not safe for concurrent use otherwise.
type Buffer struct {
	Max int
	b   []byte
	cut bool
}

func (t *Buffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.Max; t.Max > 0 && over > 0 {
		t.b = t.b[:copy(t.b, t.b[over:])]
		t.cut = true
	}
	return len(p), nil
}

// String returns the text kept, trimmed of surrounding space, with "…" in front when the
// beginning was cut. A cut may split a character; its remains are dropped.
func (t *Buffer) String() string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.b), ""))
	if t.cut && s != "" {
		s = "…" + s
	}
	return s
}
