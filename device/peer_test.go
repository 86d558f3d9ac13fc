package device_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/device"
)

// peer is a scripted agent server speaking raw WebSocket frames: the tests see exactly what the
// device puts on the wire, byte for byte, with no JSON-RPC library in between.
type peer struct {
	t     *testing.T
	srv   *httptest.Server
	conns chan *websocket.Conn
	// hold keeps each accepted connection's handler alive until the test is done with it.
	mu     sync.Mutex
	closed chan struct{}
}

func newPeer(t *testing.T) *peer {
	t.Helper()
	p := &peer{t: t, conns: make(chan *websocket.Conn, 16), closed: make(chan struct{})}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(1 << 20)
		p.conns <- c
		<-p.closed
	}))
	t.Cleanup(func() {
		close(p.closed)
		p.srv.Close()
	})
	return p
}

func (p *peer) url() string { return "ws" + strings.TrimPrefix(p.srv.URL, "http") + "/" }

// accept waits for the device's next connection.
func (p *peer) accept(ctx context.Context) *line {
	p.t.Helper()
	select {
	case c := <-p.conns:
		l := &line{t: p.t, c: c}
		p.t.Cleanup(func() { c.CloseNow() })
		return l
	case <-ctx.Done():
		p.t.Fatalf("device did not connect: %v", ctx.Err())
		return nil
	}
}

// acceptRegistered waits for the device's next connection, reads its registration and answers
// that it is registered.
func (p *peer) acceptRegistered(ctx context.Context) *line {
	p.t.Helper()
	l := p.accept(ctx)
	var reg struct{ ID string }
	if err := json.Unmarshal(l.recv(), &reg); err != nil {
		p.t.Fatal(err)
	}
	l.send(websocket.MessageText, fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{"status":"registered"}}`, reg.ID))
	return l
}

// registeredLine starts an agent on a new peer and registers it; the test owns the line.
func registeredLine(t *testing.T, opts device.Options) *line {
	t.Helper()
	p := newPeer(t)
	opts.URL = p.url()
	runAgent(t, newAgent(t, opts))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.acceptRegistered(ctx)
}

// line is one accepted connection, read by the test directly.
type line struct {
	t *testing.T
	c *websocket.Conn
}

func (l *line) send(typ websocket.MessageType, frame string) {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.c.Write(ctx, typ, []byte(frame)); err != nil {
		l.t.Fatalf("send %s: %v", frame, err)
	}
}

// recv returns the next text frame the device sends.
func (l *line) recv() []byte {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	typ, b, err := l.c.Read(ctx)
	if err != nil {
		l.t.Fatalf("waiting for a frame from the device: %v", err)
	}
	if typ != websocket.MessageText {
		l.t.Fatalf("device sent a %v frame, want text: %s", typ, b)
	}
	return b
}

// sameJSON reports whether a and b encode the same JSON value, whatever the key order and spacing.
func sameJSON(a, b []byte) bool {
	var va, vb any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if da.Decode(&va) != nil || db.Decode(&vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}
