package term

import (
	"io"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Editor reads the lines a person types at a terminal and draws them as they are edited. It
// measures what it draws in columns (RuneWidth: a Chinese character takes two), wraps the line
// at the terminal's width as the terminal does, and after every change takes the cursor back to
// the prompt's row, clears the screen from there down and draws the prompt and the line again,
// so the rows an old, longer line took are cleared and the screen shows the line that Enter
// returns.
//
// Keys: printable characters insert; Enter ends the line; Left, Right, Ctrl-B, Ctrl-F move;
// Home, End, Ctrl-A, Ctrl-E go to the ends; Alt-Left, Alt-Right, Alt-B, Alt-F move by a word;
// Backspace, Delete, Ctrl-D (Ctrl-D on an empty line is the end of input) delete a character;
// Ctrl-K deletes to the end, Ctrl-U to the start, Ctrl-W (Alt-Backspace) the word before the
// cursor; Up, Down, Ctrl-P, Ctrl-N go through the lines entered before; Ctrl-L clears the
// screen. Tab inserts a space; other controls and unknown escape sequences are ignored.
//
// The terminal must be set up with EditMode (keys one at a time, no echo). While a line is being
// edited, the program's other output must go through Write, which takes the line off the screen,
// writes the text and draws the line again below it. A line taller than the screen cannot be
// redrawn in place: the cursor cannot go above the top row.
type Editor struct {
	in     io.Reader
	out    io.Writer
	prompt []rune
	width  func() int

	mu      sync.Mutex
	line    []rune
	pos     int  // the cursor, an index into line
	shown   bool // the prompt and the line are on screen, the cursor row rows below the prompt's
	row     int
	history []string // oldest first
	hist    int      // the entry of history shown, counted back from the newest; -1 none
	typed   string   // the line being typed, kept while history is shown
	inbuf   []byte   // read and not yet taken as keys: the start of a key
	outbuf  []byte
}

const (
	// MaxLineRunes bounds the line typed: far more than any command, and a redraw stays small.
	MaxLineRunes = 4096
	historySize  = 100
	defaultWidth = 80
)

// NewEditor returns an editor that reads keys from in and draws on out with the prompt. width
// says how many columns the terminal has (asked before each redraw, so a resize between keys is
// followed); nil, or an answer under 2, means 80.
func NewEditor(in io.Reader, out io.Writer, prompt string, width func() int) *Editor {
	return &Editor{in: in, out: out, prompt: []rune(prompt), width: width, hist: -1}
}

// ReadLine shows the prompt and returns the line typed when Enter is pressed. At the end of
// input, or for Ctrl-D on an empty line, it returns io.EOF, with the cursor left after the line.
func (e *Editor) ReadLine() (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	// The console's output ends its lines: the prompt starts a row.
	e.line, e.pos, e.hist, e.row, e.shown = nil, 0, -1, 0, true
	e.draw()
	buf := make([]byte, 256)
	for {
		line, done, err := e.keys()
		if werr := e.flush(); werr != nil && err == nil {
			err = werr
		}
		if done || err != nil {
			e.shown = false
			return line, err
		}
		e.mu.Unlock()
		n, rerr := e.in.Read(buf)
		e.mu.Lock()
		e.inbuf = append(e.inbuf, buf[:n]...)
		if rerr != nil {
			line, done, err = e.keys()
			e.inbuf = e.inbuf[:0] // the start of a key that never ended
			if werr := e.flush(); werr != nil && err == nil {
				err = werr
			}
			e.shown = false
			if done || err != nil {
				return line, err
			}
			return "", rerr
		}
	}
}

// Write writes p above the line being edited, or as it is when no line is. Text that does not
// end its line is ended, so the prompt starts a row of its own.
func (e *Editor) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.shown {
		return e.out.Write(p)
	}
	e.clear()
	e.outbuf = append(e.outbuf, p...)
	if len(p) > 0 && p[len(p)-1] != '\n' {
		e.outbuf = append(e.outbuf, '\r', '\n')
	}
	e.row = 0
	e.draw()
	if err := e.flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// keys applies the keys in inbuf. done is set, with the line, when Enter was pressed; err is
// io.EOF for Ctrl-D on an empty line. Keys after the Enter wait for the next ReadLine.
func (e *Editor) keys() (line string, done bool, err error) {
	changed := false
	defer func() {
		if changed && !done {
			e.redraw()
		}
	}()
	for len(e.inbuf) > 0 {
		k, r, n := decodeKey(e.inbuf)
		if n == 0 {
			return "", false, nil // the rest of the key is still to come
		}
		e.inbuf = e.inbuf[n:]
		switch k {
		case keyEnter:
			if changed {
				e.redraw()
			}
			cells, end := e.layout(e.cols(), nil)
			from := e.cursorCell(cells, end)
			e.pos = len(e.line)
			e.moveFrom(from, cells, end)
			e.outbuf = append(e.outbuf, '\r', '\n')
			line = string(e.line)
			e.remember(line)
			return line, true, nil
		case keyCtrlD:
			if len(e.line) == 0 {
				return "", false, io.EOF
			}
			k = keyDelete
		}
		changed = e.edit(k, r) || changed
	}
	return "", false, nil
}

// edit applies one key other than Enter; it reports whether the screen needs drawing again.
func (e *Editor) edit(k key, r rune) bool {
	switch k {
	case keyRune:
		if len(e.line) >= MaxLineRunes {
			return false
		}
		e.line = slices.Insert(e.line, e.pos, r)
		e.pos++
	case keyBackspace:
		if e.pos == 0 {
			return false
		}
		e.line = slices.Delete(e.line, e.pos-1, e.pos)
		e.pos--
	case keyDelete:
		if e.pos == len(e.line) {
			return false
		}
		e.line = slices.Delete(e.line, e.pos, e.pos+1)
	case keyLeft:
		e.pos = max(e.pos-1, 0)
	case keyRight:
		e.pos = min(e.pos+1, len(e.line))
	case keyHome:
		e.pos = 0
	case keyEnd:
		e.pos = len(e.line)
	case keyWordLeft:
		e.pos = e.wordLeft()
	case keyWordRight:
		e.pos = e.wordRight()
	case keyKillEnd:
		e.line = e.line[:e.pos]
	case keyKillStart:
		e.line = slices.Delete(e.line, 0, e.pos)
		e.pos = 0
	case keyKillWord:
		from := e.wordLeft()
		e.line = slices.Delete(e.line, from, e.pos)
		e.pos = from
	case keyUp, keyDown:
		return e.browse(k == keyUp)
	case keyClearScreen:
		e.outbuf = append(e.outbuf, "\x1b[H\x1b[2J"...)
		e.row = 0
	default:
		return false
	}
	return true
}

func isSpace(r rune) bool { return r == ' ' || r == '\u3000' }

// wordLeft is where the word before the cursor starts: spaces are skipped, then the word.
func (e *Editor) wordLeft() int {
	i := e.pos
	for i > 0 && isSpace(e.line[i-1]) {
		i--
	}
	for i > 0 && !isSpace(e.line[i-1]) {
		i--
	}
	return i
}

// wordRight is where the word after the cursor ends.
func (e *Editor) wordRight() int {
	i := e.pos
	for i < len(e.line) && isSpace(e.line[i]) {
		i++
	}
	for i < len(e.line) && !isSpace(e.line[i]) {
		i++
	}
	return i
}

// browse shows the entry before (back) or after the one shown; past the newest is the line that
// was being typed.
func (e *Editor) browse(back bool) bool {
	to := e.hist - 1
	if back {
		to = e.hist + 1
	}
	if to < -1 || to >= len(e.history) {
		return false
	}
	if e.hist == -1 {
		e.typed = string(e.line)
	}
	e.hist = to
	text := e.typed
	if to >= 0 {
		text = e.history[len(e.history)-1-to]
	}
	e.line = []rune(text)
	e.pos = len(e.line)
	return true
}

func (e *Editor) remember(line string) {
	e.hist = -1
	if line == "" || len(e.history) > 0 && e.history[len(e.history)-1] == line {
		return
	}
	if len(e.history) == historySize {
		e.history = append(e.history[:0], e.history[1:]...)
	}
	e.history = append(e.history, line)
}

func (e *Editor) cols() int {
	if e.width != nil {
		if w := e.width(); w >= 2 {
			return w
		}
	}
	return defaultWidth
}

// clear takes the cursor to the start of the prompt's row and clears the screen from there down.
func (e *Editor) clear() {
	if e.row > 0 {
		e.outbuf = appendCSI(e.outbuf, e.row, 'A')
	}
	e.outbuf = append(e.outbuf, "\r\x1b[J"...)
	e.row = 0
}

func (e *Editor) redraw() {
	e.clear()
	e.draw()
}

// cell is where a character of the prompt and line is drawn.
type cell struct{ row, col int }

// layout places the prompt and the line as the terminal wraps them at w columns: a character
// that does not fit in what is left of a row (a wide one in the last column) starts the next.
// It returns where each rune of the line starts and where the line ends. A row filled to its
// last column is ended by the editor, so the end is never past the last column.
func (e *Editor) layout(w int, each func(r rune, at cell, wrap bool)) (line []cell, end cell) {
	line = make([]cell, len(e.line))
	var at cell
	place := func(r rune) cell {
		rw := RuneWidth(r)
		wrap := at.col+rw > w
		if wrap {
			at = cell{at.row + 1, 0}
		}
		start := at
		if each != nil {
			each(r, start, wrap)
		}
		at.col += rw
		if at.col >= w {
			at = cell{at.row + 1, 0}
		}
		return start
	}
	for _, r := range e.prompt {
		place(r)
	}
	for i, r := range e.line {
		line[i] = place(r)
	}
	return line, at
}

// draw writes the prompt and the line from the start of the cursor's row and puts the cursor on
// pos.
func (e *Editor) draw() {
	w := e.cols()
	var at cell // where the terminal's cursor is
	cells, end := e.layout(w, func(r rune, c cell, wrap bool) {
		if wrap {
			e.outbuf = append(e.outbuf, '\r', '\n')
		}
		e.outbuf = utf8.AppendRune(e.outbuf, r)
		at = cell{c.row, c.col + RuneWidth(r)}
		if at.col >= w {
			// The terminal holds the cursor in the last column until the next character;
			// CR LF takes it to the next row's start either way.
			e.outbuf = append(e.outbuf, '\r', '\n')
			at = cell{at.row + 1, 0}
		}
	})
	e.moveFrom(at, cells, end)
}

// cursorCell is where the cursor is drawn: on the character at pos, or after the line.
func (e *Editor) cursorCell(cells []cell, end cell) cell {
	if e.pos < len(cells) {
		return cells[e.pos]
	}
	return end
}

// moveFrom moves the cursor from the cell at to pos's.
func (e *Editor) moveFrom(at cell, cells []cell, end cell) {
	to := e.cursorCell(cells, end)
	if at.row > to.row {
		e.outbuf = appendCSI(e.outbuf, at.row-to.row, 'A')
	} else if at.row < to.row {
		e.outbuf = appendCSI(e.outbuf, to.row-at.row, 'B')
	}
	if at.col != to.col {
		e.outbuf = append(e.outbuf, '\r')
		if to.col > 0 {
			e.outbuf = appendCSI(e.outbuf, to.col, 'C')
		}
	}
	e.row = to.row
}

func appendCSI(b []byte, n int, final byte) []byte {
	b = append(b, 0x1b, '[')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, final)
}

func (e *Editor) flush() error {
	if len(e.outbuf) == 0 {
		return nil
	}
	_, err := e.out.Write(e.outbuf)
	e.outbuf = e.outbuf[:0]
	return err
}

type key uint8

const (
	keyNone key = iota // a key that does nothing here
	keyRune
	keyEnter
	keyBackspace
	keyDelete
	keyCtrlD
	keyLeft
	keyRight
	keyHome
	keyEnd
	keyWordLeft
	keyWordRight
	keyKillEnd
	keyKillStart
	keyKillWord
	keyUp
	keyDown
	keyClearScreen
)

// controls are the keys Ctrl-A to Ctrl-Z (and Backspace's DEL) send.
var controls = map[byte]key{
	1: keyHome, 2: keyLeft, 4: keyCtrlD, 5: keyEnd, 6: keyRight, 8: keyBackspace,
	10: keyEnter, 11: keyKillEnd, 12: keyClearScreen, 13: keyEnter, 14: keyDown, 16: keyUp,
	21: keyKillStart, 23: keyKillWord, 0x7f: keyBackspace,
}

// sequences are the escape sequences of the keys, after ESC [ (CSI) or ESC O (SS3).
var sequences = map[string]key{
	"A": keyUp, "B": keyDown, "C": keyRight, "D": keyLeft, "H": keyHome, "F": keyEnd,
	"1~": keyHome, "7~": keyHome, "4~": keyEnd, "8~": keyEnd, "3~": keyDelete,
	"1;3C": keyWordRight, "1;5C": keyWordRight, "1;3D": keyWordLeft, "1;5D": keyWordLeft,
}

// maxSequence bounds an escape sequence: longer, it is no key, and is dropped.
const maxSequence = 16

// decodeKey reads the key b starts with and how many bytes it took; n is 0 when b holds only
// the start of a key.
func decodeKey(b []byte) (k key, r rune, n int) {
	c := b[0]
	switch {
	case c == '\r' && len(b) > 1 && b[1] == '\n':
		return keyEnter, 0, 2
	case c == '\t':
		return keyRune, ' ', 1
	case c == 0x1b:
		return decodeEscape(b)
	case c < 0x20 || c == 0x7f:
		return controls[c], 0, 1
	case !utf8.FullRune(b):
		return keyNone, 0, 0
	}
	r, n = utf8.DecodeRune(b)
	if (r == utf8.RuneError && n == 1) || mustEscape(r, n, true) {
		return keyNone, 0, n
	}
	return keyRune, r, n
}

func decodeEscape(b []byte) (key, rune, int) {
	if len(b) < 2 {
		return keyNone, 0, 0
	}
	switch b[1] {
	case 'b':
		return keyWordLeft, 0, 2
	case 'f':
		return keyWordRight, 0, 2
	case 0x7f:
		return keyKillWord, 0, 2
	case '[', 'O':
	default:
		return keyNone, 0, 2 // Alt and a key this editor has no use for
	}
	// ESC [ parameters (0x30-0x3f), intermediates (0x20-0x2f), a final byte (0x40-0x7e).
	for i := 2; i < len(b) && i < maxSequence; i++ {
		switch c := b[i]; {
		case c >= 0x40 && c <= 0x7e:
			return sequences[string(b[2:i+1])], 0, i + 1
		case c < 0x20 || c > 0x7e:
			return keyNone, 0, i // not a sequence: the byte starts a key of its own
		}
	}
	if len(b) >= maxSequence {
		return keyNone, 0, maxSequence
	}
	return keyNone, 0, 0
}
