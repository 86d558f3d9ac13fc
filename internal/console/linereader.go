package console

import (
	"bufio"
	"context"
	"io"
)

// lineReader reads lines on demand in a goroutine, so a command can wait for the next line and
// for ctx at once. It reads only when asked: once the console stops asking, the goroutine is idle
// and stop ends it. The one read it cannot end is a read already blocked on a terminal when ctx is
// cancelled; that goroutine ends with the process.
type lineReader struct {
	want    chan struct{}
	lines   chan lineResult
	quit    chan struct{}
	done    chan struct{}
	pending bool // a read was asked for and its result not taken
}

type lineResult struct {
	line string
	err  error
}

// maxLine is the longest command line: room for any tool input a person would type or script.
const maxLine = 1 << 20

// newLineReader reads the lines of in, a script or a terminal in its own line mode.
func newLineReader(in io.Reader) *lineReader {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	return newLineFuncReader(func() (string, error) {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return "", err
			}
			return "", io.EOF
		}
		return sc.Text(), nil
	})
}

// newLineFuncReader reads lines with read, which returns io.EOF at the end; after an error it is
// not called again.
func newLineFuncReader(read func() (string, error)) *lineReader {
	r := &lineReader{
		want:  make(chan struct{}),
		lines: make(chan lineResult, 1), // never blocks the reader, even after stop
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go func() {
		defer close(r.done)
		for {
			select {
			case <-r.want:
			case <-r.quit:
				return
			}
			line, err := read()
			if err != nil {
				r.lines <- lineResult{err: err}
				return
			}
			r.lines <- lineResult{line: line}
		}
	}()
	return r
}

// next returns the next line, io.EOF at the end of input, or ctx's error.
func (r *lineReader) next(ctx context.Context) (string, error) {
	if !r.pending {
		select {
		case r.want <- struct{}{}:
			r.pending = true
		case <-r.done:
			return "", io.EOF
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	select {
	case res := <-r.lines:
		r.pending = false
		return res.line, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stop ends the reading goroutine and waits for it, unless it is blocked in a read (see above).
func (r *lineReader) stop() {
	close(r.quit)
	if !r.pending {
		<-r.done
	}
}
