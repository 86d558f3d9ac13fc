package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// FuzzRead sends any frame to a live device Stream served by a Read loop
// (serveRead) and checks the line survives it: the device sends back at most
// one frame, a JSON-RPC response, with the id of a request echoed byte for
// byte, and a request sent afterwards is still served.
func FuzzRead(f *testing.F) {
	srv := newRawServer(f, nil)
	s := mustDial(f, srv.url(), &DialOptions{PingInterval: -1})
	serveRead(f, s, nil)
	fuzzLine(f, <-srv.conns, s, true)
}

// FuzzReadObject is FuzzRead for a device served by a jsonrpc2.Conn over
// ReadObject, as the agent and test side run it.
func FuzzReadObject(f *testing.F) {
	srv := newRawServer(f, nil)
	s := mustDial(f, srv.url(), &DialOptions{PingInterval: -1})
	conn := NewConn(context.Background(), s, echoHandler(nil), nil)
	f.Cleanup(func() { conn.Close() })
	fuzzLine(f, <-srv.conns, s, false)
}

// fuzzLine runs the fuzz loop of FuzzRead and FuzzReadObject against the
// server side c of a device Stream s. exactID: a request's answer must carry
// its id byte for byte (Read), not only the same value (jsonrpc2).
func fuzzLine(f *testing.F, c *websocket.Conn, s *Stream, exactID bool) {
	f.Cleanup(func() { c.CloseNow() })
	seq := 0
	f.Fuzz(func(t *testing.T, frame []byte, binary bool) {
		seq++
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		typ := websocket.MessageText
		if binary {
			typ = websocket.MessageBinary
		}
		if err := c.Write(ctx, typ, frame); err != nil {
			t.Fatalf("write: %v (device gone: %v)", err, s.Err())
		}
		var reqID []byte // the id the answer must echo, for a request Read takes
		if v := classify(frame); !binary && v.kind == frameRequest && v.env.id != nil {
			reqID = v.env.id
		}
		sentinel := fmt.Sprintf(`"sentinel-%d"`, seq)
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"ping","id":`+sentinel+`}`)); err != nil {
			t.Fatalf("write sentinel: %v", err)
		}
		for n := 0; ; n++ {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("read: %v (device: %v)", err, s.Err())
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(b, &resp); err != nil || resp.JSONRPC != "2.0" || resp.ID == nil {
				t.Fatalf("device sent %q: not a JSON-RPC response", b)
			}
			if bytes.Equal(resp.ID, []byte(sentinel)) {
				break
			}
			if n > 0 {
				t.Fatalf("device sent two frames for one: %s", b)
			}
			if exactID && reqID != nil && !bytes.Equal(resp.ID, reqID) {
				t.Fatalf("request id %s answered as %s", reqID, resp.ID)
			}
		}
	})
}
