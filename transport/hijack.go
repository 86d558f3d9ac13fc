package transport

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
)

// The buffers a server-side line reads and writes through. coder/websocket keeps the
// connection's bufio reader and writer for the line's life, and net/http's are 4 KiB each: a
// server holding thousands of idle lines held 8 KiB apiece in them. A device's calls, answers
// and messages fit in these; a bigger frame is read or written past the buffer, in a read or a
// write more.
const (
	lineReadBuffer  = 512
	lineWriteBuffer = 1 << 10
)

// smallBuffers is the ResponseWriter Accept upgrades: its Hijack hands coder/websocket the
// connection with buffers of the sizes above instead of net/http's.
type smallBuffers struct{ http.ResponseWriter }

func (w smallBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack hijacks the connection, and gives it buffers of its own. What net/http has read past
// the handshake already (a client may send its first frames without waiting for the answer) is
// moved into the new reader's buffer; more than it holds, and net/http's buffers are kept.
func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	n := brw.Reader.Buffered()
	if n > lineReadBuffer {
		return c, brw, nil
	}
	var early []byte
	if n > 0 {
		b, _ := brw.Reader.Peek(n)
		early = bytes.Clone(b)
	}
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(early), c), lineReadBuffer)
	if n > 0 {
		// Into the buffer, where coder/websocket looks for what was read before it took over.
		if _, err := r.Peek(n); err != nil {
			return nil, nil, err
		}
	}
	return c, bufio.NewReadWriter(r, bufio.NewWriterSize(c, lineWriteBuffer)), nil
}
