package ptytest

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/devicectl/devicectl/internal/term"
)

// VT is a small VT100 screen, enough of one to check what a line editor shows: it applies what
// a program writes to a grid of cells as xterm would. It knows printable characters, East Asian
// wide ones taking two cells (RuneWidth), wrapping at the right margin (the cursor waits in the
// last column until the next character; a wide character that does not fit there goes to the
// next row), scrolling at the bottom, CR, LF, BS, TAB, the cursor moves CUU, CUD, CUF, CUB and
// CUP, and the erases EL and ED. Other sequences (colours, OSC) change nothing; other control
// characters are dropped. It takes output as the terminal receives it: a newline the terminal
// driver did not turn into CR LF only moves down.
type VT struct {
	mu         sync.Mutex
	cols, rows int
	cells      [][]rune // 0: blank (never written or erased); wideTail: a wide character's right half
	row, col   int
	wrapNext   bool   // the cursor waits in the last column: the next character wraps
	pending    []byte // the start of a character or escape sequence
}

const wideTail = -1

// NewVT returns a blank screen of cols columns and rows rows, the cursor at the top left.
func NewVT(cols, rows int) *VT {
	v := &VT{cols: cols, rows: rows, cells: make([][]rune, rows)}
	for i := range v.cells {
		v.cells[i] = make([]rune, cols)
	}
	return v
}

// Write applies p to the screen.
func (v *VT) Write(p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	b := append(v.pending, p...)
	for len(b) > 0 {
		n := v.apply(b)
		if n == 0 {
			break
		}
		b = b[n:]
	}
	v.pending = append([]byte(nil), b...)
	return len(p), nil
}

// apply applies the character or sequence b starts with and returns its length; 0 when b holds
// only its start.
func (v *VT) apply(b []byte) int {
	switch c := b[0]; {
	case c == 0x1b:
		return v.escape(b)
	case c == '\r':
		v.col, v.wrapNext = 0, false
	case c == '\n':
		v.lineFeed()
	case c == '\b':
		v.col, v.wrapNext = max(v.col-1, 0), false
	case c == '\t':
		v.col, v.wrapNext = min((v.col/8+1)*8, v.cols-1), false
	case c < 0x20 || c == 0x7f:
	default:
		if !utf8.FullRune(b) {
			return 0
		}
		r, n := utf8.DecodeRune(b)
		v.put(r)
		return n
	}
	return 1
}

func (v *VT) put(r rune) {
	w := term.RuneWidth(r)
	if w == 0 {
		return // controls, and marks that combine with the cell before: nothing to check here
	}
	if v.wrapNext || v.col+w > v.cols {
		v.col = 0
		v.lineFeed()
	}
	v.set(v.row, v.col, r)
	if w == 2 {
		v.set(v.row, v.col+1, wideTail)
	}
	v.col += w
	if v.col >= v.cols {
		v.col, v.wrapNext = v.cols-1, true
	}
}

// set writes one cell; a wide character it cuts in half is erased whole.
func (v *VT) set(row, col int, r rune) {
	line := v.cells[row]
	if r != wideTail && line[col] == wideTail && col > 0 {
		line[col-1] = 0
	}
	if col+1 < v.cols && line[col+1] == wideTail {
		line[col+1] = 0
	}
	line[col] = r
}

func (v *VT) lineFeed() {
	v.wrapNext = false
	if v.row < v.rows-1 {
		v.row++
		return
	}
	copy(v.cells, v.cells[1:])
	v.cells[v.rows-1] = make([]rune, v.cols)
}

// escape applies ESC and what follows it.
func (v *VT) escape(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '[':
		for i := 2; i < len(b); i++ {
			if c := b[i]; c >= 0x40 && c <= 0x7e {
				v.csi(string(b[2:i]), c)
				return i + 1
			}
		}
		return 0
	case ']': // OSC, ended by BEL or ESC \
		for i := 2; i < len(b); i++ {
			if b[i] == 0x07 {
				return i + 1
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
		}
		return 0
	}
	return 2
}

func (v *VT) csi(params string, final byte) {
	args := strings.Split(params, ";")
	arg := func(i, def int) int {
		if i >= len(args) {
			return def
		}
		n, err := strconv.Atoi(args[i])
		if err != nil || n == 0 {
			return def
		}
		return n
	}
	n := arg(0, 1)
	switch final {
	case 'A':
		v.row = max(v.row-n, 0)
	case 'B':
		v.row = min(v.row+n, v.rows-1)
	case 'C':
		v.col = min(v.col+n, v.cols-1)
	case 'D':
		v.col = max(v.col-n, 0)
	case 'H', 'f':
		v.row, v.col = min(arg(0, 1), v.rows)-1, min(arg(1, 1), v.cols)-1
	case 'K':
		v.erase(v.row, arg(0, 0))
	case 'J':
		mode := arg(0, 0)
		v.erase(v.row, mode)
		for r := range v.rows {
			if mode == 2 || mode == 0 && r > v.row || mode == 1 && r < v.row {
				v.erase(r, 2)
			}
		}
	default:
		return // SGR and the rest: nothing on the grid changes
	}
	v.wrapNext = false
}

// erase clears row from the cursor to its end (mode 0), from its start to the cursor (1), or
// all of it (2).
func (v *VT) erase(row, mode int) {
	from, to := 0, v.cols
	switch mode {
	case 0:
		from = v.col
	case 1:
		to = v.col + 1
	}
	clear(v.cells[row][from:to])
}

// Cursor is where the cursor is, row and column counted from 0.
func (v *VT) Cursor() (row, col int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.row, v.col
}

// Cell is the character in a cell: 0 when blank, and for the right half of a wide one.
func (v *VT) Cell(row, col int) rune {
	v.mu.Lock()
	defer v.mu.Unlock()
	return max(v.cells[row][col], 0)
}

// Row is the text of a row: its characters in order, blank cells left out.
func (v *VT) Row(row int) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.rowText(row)
}

// Rows is the number of rows.
func (v *VT) Rows() int { return v.rows }

func (v *VT) rowText(row int) string {
	var b strings.Builder
	for _, r := range v.cells[row] {
		if r > 0 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// String draws the screen, a row a line, blank cells as spaces and the right half of a wide
// character as nothing, for a test's failure message.
func (v *VT) String() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var b strings.Builder
	for i, line := range v.cells {
		var s strings.Builder
		for _, r := range line {
			switch {
			case r == 0:
				s.WriteByte(' ')
			case r > 0:
				s.WriteRune(r)
			}
		}
		mark := " "
		if i == v.row {
			mark = ">"
		}
		b.WriteString(mark + "|" + strings.TrimRight(s.String(), " ") + "\n")
	}
	return b.String()
}

// Split finds the last row at or above the cursor that starts with prompt (the row a line
// editor drew its prompt on) and returns the screen's text from there: before the cursor, and
// from the cursor's cell to the end of the screen (blank cells left out). For an editor at rest,
// before is the prompt and the line up to the cursor, after the rest of the line, and nothing
// else: a character left over from an old line shows in one of them.
func (v *VT) Split(prompt string) (before, after string, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	top := -1
	for r := v.row; r >= 0; r-- {
		if strings.HasPrefix(v.rowText(r), prompt) {
			top = r
			break
		}
	}
	if top < 0 {
		return "", "", false
	}
	var b, a strings.Builder
	for r := top; r < v.rows; r++ {
		for c, x := range v.cells[r] {
			if x <= 0 {
				continue
			}
			if r < v.row || r == v.row && c < v.col {
				b.WriteRune(x)
			} else {
				a.WriteRune(x)
			}
		}
	}
	return b.String(), a.String(), true
}
