package console

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/devicectl/devicectl/internal/term"
)

// editor reads the lines a person types at a terminal with term.Editor: the arrows move in the
// line and through the lines typed before (up, down), and the usual Emacs keys edit it (Ctrl-A,
// Ctrl-E, Ctrl-K, Ctrl-U, Ctrl-W, ...); a Chinese character takes its two columns and a long line
// wraps, so what the screen shows is what Enter sends. While it runs, every write to the
// console's output goes through the Editor, which moves the prompt and the half-typed line out of
// the way and draws them again after the text.
type editor struct {
	t       *term.Editor
	out     *SyncWriter
	tty     io.Writer // what out wrote to before
	restore func() error
	once    sync.Once
}

// newEditor starts line editing when in and out's writer are both terminals; otherwise it returns
// nil and the console reads in as a script.
func newEditor(in io.Reader, out *SyncWriter, prompt string) (*editor, error) {
	inFile, ok := in.(*os.File)
	if !ok || !term.IsTerminal(inFile) {
		return nil, nil
	}
	out.mu.Lock()
	tty := out.w
	out.mu.Unlock()
	outFile, ok := tty.(*os.File)
	if !ok || !term.IsTerminal(outFile) {
		return nil, nil
	}
	restore, err := term.EditMode(inFile)
	if err != nil {
		return nil, err
	}
	// Asked at every redraw, so lines wrap where the terminal wraps them after a resize; 80
	// columns when the size cannot be read.
	width := func() int { return term.Width(outFile) }
	t := term.NewEditor(inFile, tty, prompt, width)
	out.swap(t)
	return &editor{t: t, out: out, tty: tty, restore: restore}, nil
}

// readLine returns the next line typed: io.EOF for Ctrl-D on an empty line.
func (e *editor) readLine() (string, error) { return e.t.ReadLine() }

// close gives the console's output its terminal back and the terminal its settings. It may be
// called more than once; only the first call does it, and reports its error.
func (e *editor) close() (err error) {
	e.once.Do(func() {
		e.out.swap(e.tty)
		if rerr := e.restore(); rerr != nil {
			err = fmt.Errorf("line editing: %w", rerr)
		}
	})
	return err
}
