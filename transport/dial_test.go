package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestDialHeaders checks the handshake carries the caller's headers and the
// bearer token, and leaves the caller's options untouched.
func TestDialHeaders(t *testing.T) {
	const token = "s3cret-t0ken"
	tests := []struct {
		name      string
		token     string
		wantAuth  string
		userAgent string
	}{
		{"with token", token, "Bearer " + token, "devicectl/1.2.3"},
		{"without token", "", "", "devicectl/1.2.3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			srv := newRawServer(t, nil)
			header := http.Header{}
			header.Set("Device-Id", "AA-BB-CC-DD-EE-FF")
			header.Set("Client-Id", "7d6c3f5e-2a8b-4c1d-9e0f-123456789abc")
			header.Set("User-Agent", tc.userAgent)
			logger, logs := newTestLogger()
			opts := &DialOptions{Header: header, Token: tc.token, Logger: logger}

			dialConn(t, srv.url(), opts, echoHandler(nil))
			srv.accept(t)
			got := <-srv.headers

			for k, want := range map[string]string{
				"Device-Id":     "AA-BB-CC-DD-EE-FF",
				"Client-Id":     "7d6c3f5e-2a8b-4c1d-9e0f-123456789abc",
				"User-Agent":    tc.userAgent,
				"Authorization": tc.wantAuth,
			} {
				if got.Get(k) != want {
					t.Errorf("header %s = %q, want %q", k, got.Get(k), want)
				}
			}
			if _, ok := got["Authorization"]; ok != (tc.token != "") {
				t.Errorf("Authorization header present = %v with token %q", ok, tc.token)
			}
			if len(header) != 3 || header.Get("Authorization") != "" {
				t.Errorf("the caller's Header was changed: %v", header)
			}
			if tc.token != "" && strings.Contains(logs.String(), tc.token) {
				t.Errorf("the token is in the log:\n%s", logs)
			}
		})
	}
}

// TestDialTokenNeverShown checks that failed dials name neither the token
// in the error nor in the log, even when the server echoes the
// Authorization header or the URL carries the token too.
func TestDialTokenNeverShown(t *testing.T) {
	leakCheck(t)
	const token = "tok-9f8e7d6c5b4a"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		http.Error(w, "unauthorized: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer echo.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	for _, url := range []string{
		"ws" + strings.TrimPrefix(echo.URL, "http") + "/ws",
		"ws://" + closedAddr + "/ws?token=" + token,
		"ws://user:" + token + "@" + closedAddr + "/ws",
		"wss://" + closedAddr + "/%zz" + token,
	} {
		logger, logs := newTestLogger()
		_, err := Dial(t.Context(), url, &DialOptions{Token: token, Logger: logger})
		if err == nil {
			t.Fatalf("Dial(%s) succeeded", url)
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("Dial error shows the token: %v", err)
		}
		if strings.Contains(logs.String(), token) {
			t.Errorf("the log shows the token:\n%s", logs)
		}
	}
}

// TestDialBadURL checks URLs that are not ws:// or wss:// are refused
// before any connection is made.
func TestDialBadURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1:1/", `bad URL scheme "http"`},
		{"ftp://example.com/", `bad URL scheme "ftp"`},
		{"127.0.0.1:8080", "bad URL"},
		{"ws:///path", "no host"},
		{"ws://[::1", "bad URL"},
	} {
		_, err := Dial(t.Context(), tc.url, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Dial(%q) = %v, want an error with %q", tc.url, err, tc.want)
		}
	}
}

// TestDialHandshakeTimeout checks a server that accepts TCP but never
// answers the handshake cannot hold Dial past HandshakeTimeout.
func TestDialHandshakeTimeout(t *testing.T) {
	leakCheck(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	defer func() {
		ln.Close()
		for c := range accepted {
			c.Close()
		}
	}()

	_, err = Dial(t.Context(), "ws://"+ln.Addr().String()+"/", &DialOptions{HandshakeTimeout: 50 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial = %v, want a deadline error", err)
	}
}

// TestDialContextOnlyBoundsHandshake checks the Stream outlives the context
// given to Dial.
func TestDialContextOnlyBoundsHandshake(t *testing.T) {
	leakCheck(t)
	srv := newRawServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Dial(ctx, srv.url(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	serveRead(t, s, nil) // closes s after the server's side is gone: no close handshake to wait for
	c := srv.accept(t)

	writeFrame(t, c, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"still-there"}`))
	if _, b := readFrame(t, c); string(b) != `{"jsonrpc":"2.0","id":1,"result":{"method":"still-there"}}` {
		t.Errorf("after cancelling Dial's context: %s", b)
	}
}

// A server that refuses the handshake is reported with its HTTP status, so a refused token is told
// apart from a broken line, and the token still never shows.
func TestDialRefusedHandshake(t *testing.T) {
	leakCheck(t)
	const token = "s3cret-t0ken"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right" {
			http.Error(w, "bad token "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		t.Error("the wrong token was accepted")
	}))
	defer srv.Close()
	_, err := Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), &DialOptions{Token: token})
	var he *HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized {
		t.Fatalf("Dial = %v, want a *HandshakeError with 401", err)
	}
	if !strings.Contains(err.Error(), "HTTP 401 Unauthorized") || strings.Contains(err.Error(), token) {
		t.Errorf("error %q: want the status and no token", err)
	}
}
