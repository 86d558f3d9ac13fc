package transport

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A line gets buffers of its own, smaller than net/http's, and a frame the client sent with its
// handshake, before the answer, is read all the same.
func TestAcceptSmallBuffersKeepEarlyFrame(t *testing.T) {
	type got struct {
		m   *Message
		err error
	}
	done := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := Accept(w, r, &AcceptOptions{PingInterval: -1})
		if err != nil {
			done <- got{err: err}
			return
		}
		defer s.Close()
		m, err := s.Read()
		done <- got{m, err}
	}))
	defer srv.Close()

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	payload := []byte(`{"jsonrpc":"2.0","method":"early"}`)
	key := [4]byte{1, 2, 3, 4}
	frame := []byte{0x81, 0x80 | byte(len(payload))}
	frame = append(frame, key[:]...)
	for i, b := range payload {
		frame = append(frame, b^key[i%4])
	}
	req := "GET / HTTP/1.1\r\nHost: " + srv.Listener.Addr().String() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	// One write: the frame reaches the server with the request, read by net/http before the upgrade.
	if _, err := c.Write(append([]byte(req), frame...)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	var g got
	select {
	case g = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the frame sent with the handshake was not read within 10s")
	}
	if g.err != nil || g.m.Method != "early" {
		t.Fatalf("the frame sent with the handshake: %+v, %v; want method early", g.m, g.err)
	}
}

// The buffers Hijack hands on are the line's sizes.
func TestSmallBuffersSizes(t *testing.T) {
	sizes := make(chan [2]int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := smallBuffers{w}.Hijack()
		if err != nil {
			t.Error(err)
			sizes <- [2]int{}
			return
		}
		c.Close()
		sizes <- [2]int{brw.Reader.Size(), brw.Writer.Size()}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	if got := <-sizes; got != [2]int{lineReadBuffer, lineWriteBuffer} {
		t.Errorf("buffers of %d and %d bytes, want %d and %d", got[0], got[1], lineReadBuffer, lineWriteBuffer)
	}
}
