package logging

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// redacted replaces every secret.
const redacted = "[redacted]"

// Redactor is an io.Writer that replaces every secret added to it with "[redacted]" before
// writing to the underlying writer. Each Write is scrubbed as a whole (slog writes one record per
// Write). It is safe for concurrent use, and it serialises the writes to the underlying writer.
type Redactor struct {
	w       io.Writer
	wmu     sync.Mutex               // held while writing to w
	addMu   sync.Mutex               // serialises Add
	secrets atomic.Pointer[[][]byte] // every form of every secret; replaced, never modified

	stream bool   // a secret may span writes: hold back what may be its start
	held   []byte // under wmu: the end of the last write, a secret's start, not yet written
}

// NewRedactor returns a Redactor writing to w, with no secrets yet.
func NewRedactor(w io.Writer) *Redactor {
	return &Redactor{w: w}
}

// NewStreamRedactor returns a Redactor for text written in pieces (a streamed reply, chunk by
// chunk), where a secret may be split across writes. The end of a write that could be the start
// of a secret is held back until the next write shows whether it is; call Flush when no more
// writes will come. Text that ends a line is never held, as no secret holds a line break.
func NewStreamRedactor(w io.Writer) *Redactor {
	return &Redactor{w: w, stream: true}
}

// Add makes r redact secret from now on. "" and whitespace-only strings are ignored: they
// would redact every blank.
//
// Besides the raw form, Add also redacts the forms the secret takes once escaped by
// strconv.Quote (Go's %q, the quoting of slog's text handler) and by JSON, when they differ from
// it. It goes one level further, to the secret escaped twice (an error built with %q, logged by
// a handler that escapes the error's text again), and it does the same for the secret with
// surrounding white space trimmed, since a token read from a file often carries a newline that
// its uses do not.
//
// A very short secret redacts every occurrence of those few characters, secret or not.
func (r *Redactor) Add(secret string) {
	trimmed := strings.TrimSpace(secret)
	if trimmed == "" {
		return
	}
	r.addMu.Lock()
	defer r.addMu.Unlock()
	var forms [][]byte
	if p := r.secrets.Load(); p != nil {
		forms = slices.Clone(*p)
	}
	add := func(f string) {
		if !slices.ContainsFunc(forms, func(b []byte) bool { return string(b) == f }) {
			forms = append(forms, []byte(f))
		}
	}
	for _, raw := range []string{secret, trimmed} {
		add(raw)
		for _, once := range escapes(raw) {
			add(once)
			for _, twice := range escapes(once) {
				add(twice)
			}
		}
	}
	r.secrets.Store(&forms)
}

// escapes returns s as strconv.Quote and JSON encoders write it inside a quoted string.
func escapes(s string) []string {
	q := strconv.Quote(s)
	return []string{q[1 : len(q)-1], jsonEscape(s, true), jsonEscape(s, false)}
}

// jsonEscape returns s as encoding/json writes it inside a string, with or without the
// escaping of <, > and & that json.Marshal does by default and slog's JSON handler does not.
func jsonEscape(s string, html bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	_ = e.Encode(s) // cannot fail for a string
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

// Scrub returns s with every secret replaced, for text that does not go through a logger (an
// error printed before exiting).
func (r *Redactor) Scrub(s string) string {
	out, changed := r.scrub([]byte(s))
	if !changed {
		return s
	}
	return string(out)
}

// Write scrubs p and writes the result to the underlying writer in one call. It returns len(p)
// on success: the caller's bytes were all dealt with, whatever the length of what replaced them.
func (r *Redactor) Write(p []byte) (int, error) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	buf := p
	if len(r.held) > 0 {
		buf = append(r.held, p...)
		r.held = nil
	}
	out, _ := r.scrub(buf)
	if r.stream {
		if k := r.partial(out); k > 0 {
			r.held = bytes.Clone(out[len(out)-k:])
			out = out[:len(out)-k]
		}
	}
	if len(out) > 0 {
		if _, err := r.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what a stream redactor holds back.
func (r *Redactor) Flush() error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if len(r.held) == 0 {
		return nil
	}
	held := r.held
	r.held = nil
	_, err := r.w.Write(held)
	return err
}

// partial returns the length of the longest end of p that is the start (not the whole) of a
// secret's form. It looks only where a form's first byte occurs, so ordinary text costs a scan
// of its last bytes per form.
func (r *Redactor) partial(p []byte) int {
	sp := r.secrets.Load()
	if sp == nil {
		return 0
	}
	longest := 0
	for _, s := range *sp {
		from := max(0, len(p)-(len(s)-1))
		for i := from; i < len(p); {
			j := bytes.IndexByte(p[i:], s[0])
			if j < 0 {
				break
			}
			i += j
			if n := len(p) - i; n > longest && bytes.HasPrefix(s, p[i:]) {
				longest = n
				break // the first match from the left is the longest for this form
			}
			i++
		}
	}
	return longest
}

// scrub returns p with every secret replaced, and whether anything was. It returns p itself
// when no secret occurs, so the common case costs no copy.
//
// Rather than replacing one secret after another, it marks every byte that belongs to any
// occurrence of any secret and then replaces each run of marked bytes: when secrets overlap
// (one a prefix of another, or sharing an edge) no tail of either is left visible.
func (r *Redactor) scrub(p []byte) ([]byte, bool) {
	sp := r.secrets.Load()
	if sp == nil {
		return p, false
	}
	var spans [][2]int
	for _, s := range *sp {
		for i := 0; i < len(p); {
			j := bytes.Index(p[i:], s)
			if j < 0 {
				break
			}
			spans = append(spans, [2]int{i + j, i + j + len(s)})
			i += j + 1 // occurrences may overlap ("aa" in "aaa")
		}
	}
	if len(spans) == 0 {
		return p, false
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	out := make([]byte, 0, len(p))
	next := 0 // first byte of p not yet copied or redacted
	for k := 0; k < len(spans); {
		start, end := spans[k][0], spans[k][1]
		for k++; k < len(spans) && spans[k][0] <= end; k++ {
			end = max(end, spans[k][1])
		}
		out = append(out, p[next:start]...)
		out = append(out, redacted...)
		next = end
	}
	return append(out, p[next:]...), true
}
