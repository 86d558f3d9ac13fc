//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/testing/rawconn"
	"github.com/devicectl/devicectl/internal/testing/streamllm"
)

// limitsWait bounds what the limits tests wait for: what a limit ends in a fraction of a second.
const limitsWait = rawconn.Wait

// tracked is a listener that records the connections the server holds: how many at most, and
// when each (by its client's address) is closed by the server.
type tracked struct {
	net.Listener
	sendBuffer int // > 0: each connection's send buffer, so a stalled reader blocks writes sooner

	mu        sync.Mutex
	open, max int
	closed    map[string]chan struct{}
	accepted  []string // the clients' addresses, in order
}

func track(t *testing.T) *tracked {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &tracked{Listener: ln, closed: map[string]chan struct{}{}}
}

func (l *tracked) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok && l.sendBuffer > 0 {
		tc.SetWriteBuffer(l.sendBuffer)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open++
	l.max = max(l.max, l.open)
	l.accepted = append(l.accepted, c.RemoteAddr().String())
	return &trackedConn{Conn: c, done: l.closedLocked(c.RemoteAddr().String()), l: l}, nil
}

func (l *tracked) closedLocked(remote string) chan struct{} {
	ch, ok := l.closed[remote]
	if !ok {
		ch = make(chan struct{})
		l.closed[remote] = ch
	}
	return ch
}

// closedFor is closed once the server closes the connection from client c.
func (l *tracked) closedFor(c net.Conn) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closedLocked(c.LocalAddr().String())
}

// firstClosed is closed once the server closes the first connection it accepted.
func (l *tracked) firstClosed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closedLocked(l.accepted[0])
}

func (l *tracked) maxOpen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

type trackedConn struct {
	net.Conn
	l    *tracked
	done chan struct{}
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
		close(c.done)
	})
	return err
}

// serveOn builds c's server and serves it on ln until the test ends.
func serveAgentd(t *testing.T, c *config.Config, ln net.Listener) *Server {
	t.Helper()
	srv, err := New(&Options{Config: c, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := errors.Join(srv.Close(), <-served); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	return srv
}

// request writes an HTTP/1.1 request on c.
func request(c net.Conn, method, path, ctype, body string) {
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", method, path, ctype, len(body), body)
}

// readResponse reads an answer on c, its body whole.
func readResponse(t *testing.T, br *bufio.Reader, c net.Conn) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limitsWait))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer's body: %v", err)
	}
	return resp, string(b)
}

// serverClosed fails the test unless the server closes c within rawconn.Wait.
func serverClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	if err := rawconn.Closed(c); err != nil {
		t.Fatalf("%s: the connection is %v", what, err)
	}
}

// A flood of idle connections holds no more than agent.limits.connections, and a normal request
// behind it is answered at once: idle connections make room, long before the header timeout.
func TestLimitsIdleFlood(t *testing.T) {
	c := testConfig(t)
	c.Agent.Limits.Connections = 20
	c.Agent.Limits.HeaderTimeout = time.Minute
	ln := track(t)
	serveAgentd(t, c, ln)
	addr := ln.Addr().String()
	for range 60 {
		rawconn.Dial(t, addr) // connects, sends nothing
	}
	cl := &http.Client{Timeout: limitsWait}
	resp, err := cl.Get("http://" + addr + "/agent-card")
	if err != nil {
		t.Fatalf("a normal request behind 60 idle connections: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /agent-card: %s", resp.Status)
	}
	// The new connection is accepted before the idle one it replaces is closed.
	if got := ln.maxOpen(); got > 20+1 {
		t.Errorf("the server held %d connections at once, over agent.limits.connections 20 (and the one coming in)", got)
	}
}

// Past agent.limits.connections_per_address, a new connection from the address is closed at
// once, before any header timeout.
func TestLimitsPerAddress(t *testing.T) {
	c := testConfig(t)
	c.Agent.Limits.ConnectionsPerAddress = 3
	ln := track(t)
	serveAgentd(t, c, ln)
	addr := ln.Addr().String()
	for range 3 {
		conn := rawconn.Dial(t, addr)
		br := bufio.NewReader(conn)
		request(conn, "GET", "/agent-card", "application/json", "")
		if resp, _ := readResponse(t, br, conn); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /agent-card: %s", resp.Status)
		}
	}
	serverClosed(t, rawconn.Dial(t, addr), "a 4th connection from 127.0.0.1 with connections_per_address 3")
}

// A body that trickles in is answered 408 within agent.limits.body_timeout.
func TestLimitsSlowBody(t *testing.T) {
	c := testConfig(t)
	c.Agent.Limits.BodyTimeout = 300 * time.Millisecond
	ln := track(t)
	serveAgentd(t, c, ln)
	conn := rawconn.Dial(t, ln.Addr().String())
	start := time.Now()
	fmt.Fprintf(conn, "POST /tasks/send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	rawconn.Trickle(t, conn, 50*time.Millisecond)
	resp, body := readResponse(t, bufio.NewReader(conn), conn)
	if took := time.Since(start); resp.StatusCode != http.StatusRequestTimeout || took > 3*time.Second ||
		!strings.Contains(body, "agent.limits.body_timeout (300ms)") {
		t.Errorf("after %v: %s %s; want 408 naming agent.limits.body_timeout within about 300ms", took, resp.Status, body)
	}
	serverClosed(t, conn, "after a 408")
}

// A kept-alive connection with no request is closed after agent.limits.idle_timeout.
func TestLimitsIdleKeepAlive(t *testing.T) {
	c := testConfig(t)
	c.Agent.Limits.IdleTimeout = 200 * time.Millisecond
	ln := track(t)
	serveAgentd(t, c, ln)
	conn := rawconn.Dial(t, ln.Addr().String())
	br := bufio.NewReader(conn)
	request(conn, "GET", "/agent-card", "application/json", "")
	if resp, _ := readResponse(t, br, conn); resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /agent-card: %s, close %v; want 200 kept alive", resp.Status, resp.Close)
	}
	serverClosed(t, conn, "idle after a request, with idle_timeout 200ms")
}

// A 401 closes the connection: a refused client keeps no socket.
func TestLimitsRefusedCloses(t *testing.T) {
	c := testConfig(t)
	c.Agent.TokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(c.Agent.TokenFile, []byte("s3cret-token-for-tests\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln := track(t)
	serveAgentd(t, c, ln)
	conn := rawconn.Dial(t, ln.Addr().String())
	request(conn, "POST", "/tasks/send", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`)
	if resp, _ := readResponse(t, bufio.NewReader(conn), conn); resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("without the token: %s, close %v; want 401 closing", resp.Status, resp.Close)
	}
	serverClosed(t, conn, "after a 401")
}

// A body over agent.limits.request_bytes is 413 with a JSON-RPC error naming the key.
func TestLimitsRequestBytes(t *testing.T) {
	c := testConfig(t)
	c.Agent.Limits.RequestBytes = 4 << 10
	ln := track(t)
	serveAgentd(t, c, ln)
	msg := strings.Repeat("音量", 2<<10)
	for _, path := range []string{"/tasks/send", "/a2a", "/a2a/v0.3", MCPPath} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s chunked %v", strings.Trim(path, "/"), chunked), func(t *testing.T) {
				testRequestBytes(t, "http://"+ln.Addr().String()+path, msg, chunked)
			})
		}
	}
}

func testRequestBytes(t *testing.T, url, msg string, chunked bool) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"id":"big","message":{"role":"user","parts":[{"type":"text","text":"` + msg + `"}]}}}`
	var r io.Reader = strings.NewReader(body)
	if chunked { // no Content-Length: the body runs over as the handler reads it
		r = io.MultiReader(r)
	}
	req, err := http.NewRequest("POST", url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Timeout: limitsWait}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), `"code":-32600`) ||
		!strings.Contains(string(b), "agent.limits.request_bytes (4096 bytes)") {
		t.Errorf("%s %s; want 413 with a -32600 naming agent.limits.request_bytes", resp.Status, b)
	}
}

// streamConfig is a server whose turns stream from streamllm, with short write and body timeouts.
func streamConfig(t *testing.T, n int, pace time.Duration) *config.Config {
	c := testConfig(t)
	c.Agent.Planner = config.PlannerLLM
	c.LLM.BaseURL = streamllm.Start(t, n, pace)
	c.LLM.Model = "m"
	c.Agent.Web = true
	c.Agent.Limits.WriteTimeout = 200 * time.Millisecond
	c.Agent.Limits.BodyTimeout = 200 * time.Millisecond
	return c
}

// The streams a client opens with a request: the seed's, A2A 1.0's and 0.3's (a2a-go).
var streams = []struct{ name, path, body string }{
	{"seed", "/tasks/send/stream", `{"jsonrpc":"2.0","id":1,"method":"tasks/send/stream","params":{"id":"t-%s","message":{"role":"user","parts":[{"type":"text","text":"sing"}]}}}`},
	{"a2a", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-%s","role":"ROLE_USER","parts":[{"text":"sing"}]}}}`},
	{"a2a v0.3", "/a2a/v0.3", `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m-%s","role":"user","parts":[{"kind":"text","text":"sing"}]}}}`},
}

// streaming reads the header of the answer on c, which must be an event stream, and nothing
// more: from then on, c's reader has stalled.
func streaming(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limitsWait))
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil)
	if err != nil {
		t.Fatalf("reading the answer's header: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("%s, %s; want an event stream", resp.Status, ct)
	}
}

// A stream whose reader stalls is dropped within agent.limits.write_timeout: the handler returns
// and the connection is closed, the seed's, a2a-go's and the web page's streams alike.
func TestLimitsStalledStream(t *testing.T) {
	c := streamConfig(t, 0, time.Millisecond)
	ln := track(t)
	ln.sendBuffer = 8 << 10
	srv := serveAgentd(t, c, ln)
	addr := ln.Addr().String()
	startDevice(t, "ws://"+addr+"/", "AA-BB-CC-DD-EE-01", "").waitRegistered(t)
	_ = srv

	for _, s := range streams {
		t.Run(s.name, func(t *testing.T) {
			conn := rawconn.DialStalled(t, addr)
			request(conn, "POST", s.path, "application/json", fmt.Sprintf(s.body, strings.ReplaceAll(s.name, " ", "")))
			streaming(t, conn)
			select {
			case <-ln.closedFor(conn):
			case <-time.After(limitsWait):
				t.Fatalf("POST %s: a reader that stalled still holds its stream after %v (write_timeout 200ms)", s.path, limitsWait)
			}
		})
	}
	t.Run("web", func(t *testing.T) {
		conn := rawconn.DialStalled(t, addr)
		fmt.Fprintf(conn, "GET /web/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		streaming(t, conn)
		resp, err := http.Post("http://"+addr+"/web/say", "application/json", strings.NewReader(`{"text":"sing"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST /web/say: %s", resp.Status)
		}
		select {
		case <-ln.closedFor(conn):
		case <-time.After(limitsWait):
			t.Fatalf("GET /web/events: a reader that stalled still holds its stream after %v (write_timeout 200ms)", limitsWait)
		}
	})
}

// A stream that is read goes on past the write and body timeouts to its end.
func TestLimitsLongStream(t *testing.T) {
	c := streamConfig(t, 100, 10*time.Millisecond) // a second: 5 write and body timeouts
	ln := track(t)
	serveAgentd(t, c, ln)
	addr := ln.Addr().String()
	startDevice(t, "ws://"+addr+"/", "AA-BB-CC-DD-EE-01", "").waitRegistered(t)
	for _, s := range streams {
		t.Run(s.name, func(t *testing.T) {
			resp, err := (&http.Client{Timeout: 3 * limitsWait}).Post("http://"+addr+s.path, "application/json",
				strings.NewReader(fmt.Sprintf(s.body, "long"+strings.ReplaceAll(s.name, " ", ""))))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !strings.Contains(string(b), "la la") || !strings.Contains(strings.ToLower(string(b)), "completed") {
				t.Errorf("POST %s: %s, %d bytes, %v; want the whole stream to its completion", s.path, resp.Status, len(b), err)
			}
		})
	}
}

// A device's WebSocket line outlives the header, body, idle and write timeouts: it is idle past
// all of them, and a turn then goes through it, on the same connection.
func TestLimitsDeviceLine(t *testing.T) {
	const timeout = 100 * time.Millisecond
	c := testConfig(t)
	c.Agent.Limits.HeaderTimeout = timeout
	c.Agent.Limits.BodyTimeout = timeout
	c.Agent.Limits.IdleTimeout = timeout
	c.Agent.Limits.WriteTimeout = timeout
	ln := track(t)
	srv := serveAgentd(t, c, ln)
	addr := ln.Addr().String()
	d := startDevice(t, "ws://"+addr+"/", "AA-BB-CC-DD-EE-01", "")
	d.waitRegistered(t)
	line := ln.firstClosed()

	// An idle keep-alive connection closed shows the idle timeout did pass; then 5 more of it.
	conn := rawconn.Dial(t, addr)
	request(conn, "GET", "/agent-card", "application/json", "")
	readResponse(t, bufio.NewReader(conn), conn)
	serverClosed(t, conn, "idle with idle_timeout 100ms")
	<-time.After(5 * timeout)

	select {
	case <-line:
		t.Fatal("the device's line was closed")
	default:
	}
	if v := final(t, turn(t, srv, agent.Request{Text: "把音量调到30"})); !strings.Contains(v, "30") {
		t.Errorf("a turn through the device: %q", v)
	}
	if v, err := d.speaker.Volume(waitCtx(t)); err != nil || v != 30 {
		t.Errorf("volume %d, %v; want 30", v, err)
	}
	select {
	case s := <-d.state:
		t.Errorf("the device went %v: its line was cut", s)
	case <-line:
		t.Error("the device's line was closed")
	default:
	}
}

// mcpPost posts a JSON-RPC message to /mcp in session (none: ""); it returns the answer and
// its body.
func mcpPost(t *testing.T, addr, session, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+MCPPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := (&http.Client{Timeout: limitsWait}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// A client of /mcp that stops reading a tool's answer is dropped within write_timeout.
func TestLimitsStalledMCP(t *testing.T) {
	c := testConfig(t)
	c.Agent.Limits.WriteTimeout = 200 * time.Millisecond
	ln := track(t)
	ln.sendBuffer = 8 << 10
	serveAgentd(t, c, ln)
	addr := ln.Addr().String()

	resp, body := mcpPost(t, addr, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q: %s", resp.Status, session, body)
	}
	if resp, body := mcpPost(t, addr, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s %s", resp.Status, body)
	}
	// 20 memories of 6 KB: an answer of 120 KB to a search for them all.
	for i := range 20 {
		content := fmt.Sprintf("机器人%d%s", i, strings.Repeat("机器人", 660))
		resp, body := mcpPost(t, addr, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_user_memory","arguments":{"user_id":"u","topics":["robot"],"content":"`+content+`"}}}`)
		if resp.StatusCode != http.StatusOK || strings.Contains(body, `"isError":true`) {
			t.Fatalf("add_user_memory: %s %.300s", resp.Status, body)
		}
	}
	search := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_user_memories","arguments":{"user_id":"u","query":"机器人 robot","limit":50}}}`
	if resp, body := mcpPost(t, addr, session, search); resp.StatusCode != http.StatusOK || len(body) < 100<<10 {
		t.Fatalf("search_user_memories: %s, %d bytes: %.300s", resp.Status, len(body), body)
	}

	conn := rawconn.DialStalled(t, addr)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", MCPPath, session, len(search), search)
	streaming(t, conn)
	select {
	case <-ln.closedFor(conn):
	case <-time.After(limitsWait):
		t.Fatalf("POST /mcp: a reader that stalled still holds its answer after %v (write_timeout 200ms)", limitsWait)
	}
}
