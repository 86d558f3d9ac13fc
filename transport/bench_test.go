package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/coder/websocket"
	"github.com/sourcegraph/jsonrpc2"
)

const benchRequest = `{"jsonrpc":"2.0","method":"mcp/tool/execute","params":{"tool_name":"amplify_volume","tool_input":{"level":80}},"id":"tool-call-12345-abcdef"}`

// clients are the two sides BenchmarkRoundTrip and BenchmarkPipelined
// compare; each dials url and returns how to stop.
var clients = []struct {
	name  string
	start func(b *testing.B, url string) (stop func())
}{
	{"bare", startBare},
	{"stream", startStream},
	{"jsonrpc2", startConn},
}

// BenchmarkRoundTrip measures one execute round trip seen from the server:
// write a request, read the answer. "bare" is the floor from docs/design.md, a
// bare coder/websocket client that answers each execute with {}; "stream" is
// the device's path, Read and WriteResult; "jsonrpc2" a jsonrpc2.Conn over
// the Stream, as the agent side runs it.
func BenchmarkRoundTrip(b *testing.B) {
	for _, c := range clients {
		b.Run(c.name, func(b *testing.B) { benchRoundTrip(b, c.start) })
	}
}

// BenchmarkPipelined measures executes per second when the server keeps up
// to 64 in flight (docs/design.md: the device must reach 0.75x the floor's rate).
func BenchmarkPipelined(b *testing.B) {
	for _, c := range clients {
		b.Run(c.name, func(b *testing.B) { benchPipelined(b, c.start) })
	}
}

// startBare is the floor from docs/design.md: a bare coder/websocket client that
// answers each execute with {}.
func startBare(b *testing.B, url string) func() {
	c, _, err := websocket.Dial(context.Background(), url, nil)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx := context.Background()
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal(data, &req); err != nil {
				return
			}
			resp := append(append([]byte(`{"jsonrpc":"2.0","id":`), req.ID...), `,"result":{}}`...)
			if err := c.Write(ctx, websocket.MessageText, resp); err != nil {
				return
			}
		}
	}()
	return func() { c.CloseNow(); <-done }
}

// startStream is the device's path: a read loop over Stream.Read that
// answers each request with {} through WriteResult, inline.
func startStream(b *testing.B, url string) func() {
	s := mustDial(b, url, nil)
	empty := json.RawMessage(`{}`)
	done := answerRequests(s, func(*Message) any { return empty }, nil)
	return func() { s.Close(); <-done }
}

// startConn is the agent and test side's path: Stream under a jsonrpc2.Conn
// whose handler replies {}.
func startConn(b *testing.B, url string) func() {
	s := mustDial(b, url, nil)
	empty := json.RawMessage(`{}`)
	conn := NewConn(context.Background(), s, handlerFunc(func(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) {
		_ = c.Reply(ctx, r.ID, empty)
	}), nil)
	return func() { conn.Close(); s.Close() }
}

// benchLine starts the client that start dials and returns the server's end of its line; both
// are closed when the benchmark ends.
func benchLine(b *testing.B, start func(b *testing.B, url string) (stop func())) *websocket.Conn {
	srv := newRawServer(b, nil)
	stop := start(b, srv.url())
	c := <-srv.conns
	b.Cleanup(func() { c.CloseNow(); stop() })
	return c
}

// benchRoundTrip runs the server side against the client that start dials.
func benchRoundTrip(b *testing.B, start func(b *testing.B, url string) (stop func())) {
	c := benchLine(b, start)
	ctx := context.Background()
	req := []byte(benchRequest)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, websocket.MessageText, req); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPipelined writes b.N requests from one goroutine while reading the
// answers, at most window in flight.
func benchPipelined(b *testing.B, start func(b *testing.B, url string) (stop func())) {
	const window = 64
	c := benchLine(b, start)
	ctx := context.Background()
	req := []byte(benchRequest)
	slots := make(chan struct{}, window)
	errs := make(chan error, 1)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for range b.N {
			slots <- struct{}{}
			if err := c.Write(ctx, websocket.MessageText, req); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for range b.N {
		if _, _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
		<-slots
	}
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

func BenchmarkClassify(b *testing.B) {
	frame := []byte(benchRequest)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		classify(frame)
	}
}

// BenchmarkReadFrame is Read's work on one frame, without the socket:
// classify, then build the Message.
func BenchmarkReadFrame(b *testing.B) {
	frame := []byte(benchRequest)
	s := new(Stream)
	b.ReportAllocs()
	for b.Loop() {
		v := classify(frame)
		if _, err := s.message(v.kind, &v.env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteResult is WriteResult's work on one frame, without the
// socket: a raw result.
func BenchmarkWriteResult(b *testing.B) {
	id := json.RawMessage(`"tool-call-12345-abcdef"`)
	result := json.RawMessage(`{"status":"success","message":"音量已成功设置为 80"}`)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := appendResult(&buf, id, result); err != nil {
			b.Fatal(err)
		}
	}
}
