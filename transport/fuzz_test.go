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

// FuzzReadObject sends any frame to a live device Stream (jsonrpc2 and all)
// and checks the line survives it: the device sends back at most one frame
// (an answer, or a reply when the frame was a valid request), that frame is a
// JSON-RPC response, and a request sent afterwards is still served.
func FuzzReadObject(f *testing.F) {
	srv := newRawServer(f, nil)
	s, err := Dial(context.Background(), srv.url(), &DialOptions{PingInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	conn := NewConn(context.Background(), s, echoHandler(nil), nil)
	c := <-srv.conns
	f.Cleanup(func() {
		c.CloseNow()
		conn.Close()
	})

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
		}
	})
}
