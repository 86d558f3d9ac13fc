package control

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/hardware"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
	"github.com/devicectl/devicectl/internal/testing/sockdir"
)

// simAgent is a device agent on simulated hardware that is never run: its Call is what the
// daemon serves the socket with.
func simAgent(t *testing.T) *device.Agent {
	t.Helper()
	c := config.Defaults()
	reg, err := hardware.NewRegistry(hardware.Sim(nil), c, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := device.New(&device.Options{URL: "ws://127.0.0.1:1/never-dialled", MAC: "AA-BB-CC-DD-EE-FF", Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func start(t *testing.T, path string, opts *Options) *Server {
	t.Helper()
	s, err := Listen(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(time.Second) })
	return s
}

// raw sends line as it is and returns the daemon's answer, "" if it hung up without one.
func raw(t *testing.T, path, line string) string {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// A server that refuses at once may have hung up already: its answer is still there to read.
	if _, err := io.WriteString(c, line); err == nil {
		c.(*net.UnixConn).CloseWrite() // as socat does at the end of its input
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the answer to %.80q: %v", line, err)
	}
	return string(b)
}

// The wire: one request line in, the device's JSON-RPC response line out, byte for byte.
func TestProtocol(t *testing.T) {
	leakcheck.Check(t)
	path := filepath.Join(sockdir.New(t), "control.sock")
	a := simAgent(t)
	s := start(t, path, &Options{Call: a.Call, MaxRequest: 256})
	cases := []struct{ name, in, want string }{
		{"result", `{"tool":"amplify_volume","input":{"level":50}}` + "\n",
			`{"jsonrpc":"2.0","id":null,"result":{"status":"success","message":"音量已成功设置为 50","level":50}}` + "\n"},
		{"id echoed, no newline", `{"id":7,"tool":"amplify_volume","input":{"level":20}}`,
			`{"jsonrpc":"2.0","id":7,"result":{"status":"success","message":"音量已成功设置为 20","level":20}}` + "\n"},
		{"invalid input", `{"id":"a","tool":"amplify_volume","input":{"level":150}}` + "\n",
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Invalid params","data":{"details":"tool_input.level: 150 is greater than the maximum 100"}}}` + "\n"},
		{"input defaults to {}", `{"tool":"amplify_volume"}` + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid params","data":{"details":"tool_input: missing required property \"level\""}}}` + "\n"},
		{"not JSON", `{"tool":` + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"details":"unexpected end of JSON input"}}}` + "\n"},
		{"unknown member", `{"tool":"amplify_volume","params":{}}` + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"details":"want one object {\"tool\": NAME, \"input\": {...}}: json: unknown field \"params\""}}}` + "\n"},
		{"no tool", `{"input":{}}` + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"details":"the request names no tool: want {\"tool\": NAME, \"input\": {...}}"}}}` + "\n"},
		{"bad id", `{"id":{},"tool":"get_device_status"}` + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"details":"id must be a string, a number or null"}}}` + "\n"},
		{"too long", `{"tool":"` + strings.Repeat("x", 300) + `"}` + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"details":"the request is longer than 256 bytes"}}}` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := raw(t, path, tc.in); got != tc.want {
				t.Errorf("answer\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	if got := s.Calls(); got != 4 {
		t.Errorf("Calls() = %d, want the 4 requests that reached the tools", got)
	}
	// The state is the agent's: the last volume set through the socket.
	resp, err := Call(t.Context(), path, &Request{Tool: "get_device_status"})
	if err != nil || resp.Error != nil {
		t.Fatalf("get_device_status: %v, %+v", err, resp)
	}
	var st struct{ Volume int }
	if err := json.Unmarshal(resp.Result, &st); err != nil || st.Volume != 20 {
		t.Errorf("status %s (%v), want volume 20", resp.Result, err)
	}
}

func TestSocketFile(t *testing.T) {
	leakcheck.Check(t)
	path := filepath.Join(sockdir.New(t), "control.sock")
	s := start(t, path, &Options{Call: simAgent(t).Call})
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o660 {
		t.Errorf("socket mode %s, want a socket with mode 0660", fi.Mode())
	}

	// A second server on the same path is refused, and the first keeps its socket.
	if _, err := Listen(path, &Options{Call: simAgent(t).Call}); !errors.Is(err, ErrInUse) {
		t.Errorf("a second Listen: %v, want ErrInUse", err)
	}
	if _, err := Call(t.Context(), path, &Request{Tool: "get_device_status"}); err != nil {
		t.Errorf("the first server after a refused second: %v", err)
	}

	s.Close(time.Second)
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Close the socket file is still there (%v)", err)
	}
	if _, err := Call(t.Context(), path, &Request{Tool: "get_device_status"}); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("a call after Close: %v, want ErrNoDaemon", err)
	}
}

// A socket a killed daemon left behind is replaced; a file that is not a socket is left alone.
func TestStaleSocket(t *testing.T) {
	leakcheck.Check(t)
	path := filepath.Join(sockdir.New(t), "control.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // the file stays, with nothing behind it
	if _, err := Call(t.Context(), path, &Request{Tool: "get_device_status"}); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("a call to the stale socket: %v, want ErrNoDaemon", err)
	}
	start(t, path, &Options{Call: simAgent(t).Call})
	if resp, err := Call(t.Context(), path, &Request{Tool: "get_device_status"}); err != nil || resp.Error != nil {
		t.Errorf("a call to the replaced socket: %v, %+v", err, resp)
	}

	file := filepath.Join(filepath.Dir(path), "not-a-socket")
	os.WriteFile(file, []byte("keep me"), 0o600)
	if _, err := Listen(file, &Options{Call: simAgent(t).Call}); err == nil || !strings.Contains(err.Error(), "is not a socket") {
		t.Errorf("Listen on a regular file: %v, want an error saying it is not a socket", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "keep me" {
		t.Errorf("the regular file holds %q after the refused Listen", b)
	}
}

// Close removes only its own socket: one a newer server put at the same path stays.
func TestCloseKeepsAnotherSocket(t *testing.T) {
	leakcheck.Check(t)
	path := filepath.Join(sockdir.New(t), "control.sock")
	old, err := Listen(path, &Options{Call: simAgent(t).Call})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path) // as someone who removed it by hand, then started another daemon
	start(t, path, &Options{Call: simAgent(t).Call})
	old.Close(time.Second)
	if _, err := Call(t.Context(), path, &Request{Tool: "get_device_status"}); err != nil {
		t.Errorf("the newer server after the old one closed: %v", err)
	}
}

// blockingCall holds each call of the tool "slow" until release is closed or its context ends;
// others answer at once.
func blockingCall(started chan<- struct{}, release <-chan struct{}) CallFunc {
	return func(ctx context.Context, tool string, _ json.RawMessage) (json.RawMessage, error) {
		if tool != "slow" {
			return json.RawMessage(`{"status":"quick"}`), nil
		}
		started <- struct{}{}
		select {
		case <-release:
			return json.RawMessage(`{"status":"success"}`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Past MaxClients a client is answered -32002 at once; an idle client is dropped after
// IdleTimeout and frees its slot.
func TestLimits(t *testing.T) {
	leakcheck.Check(t)
	path := filepath.Join(sockdir.New(t), "control.sock")
	started, release := make(chan struct{}, 1), make(chan struct{})
	start(t, path, &Options{Call: blockingCall(started, release), MaxClients: 2, IdleTimeout: 200 * time.Millisecond})

	answered := make(chan string, 1)
	go func() { answered <- raw(t, path, `{"tool":"slow"}`+"\n") }()
	<-started
	idle, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	// Both slots are taken (a call, an idle client): the next is refused.
	if got := raw(t, path, `{"tool":"x"}`+"\n"); !strings.Contains(got, `"code":-32002`) || !strings.Contains(got, "2 clients are using the control socket already") {
		t.Errorf("a third client got %q, want -32002 naming the limit", got)
	}
	// The idle one is hung up on without an answer.
	idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(idle); err != nil || len(b) != 0 {
		t.Errorf("the idle client read %q, %v; want a hang-up with nothing", b, err)
	}
	// Its slot is free again (the server frees it right after the hang-up).
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := raw(t, path, `{"tool":"x"}`+"\n")
		if strings.Contains(got, `"result":{"status":"quick"}`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle client's slot was not freed: %s", got)
		}
	}
	close(release)
	if got := <-answered; !strings.Contains(got, `"result":{"status":"success"}`) {
		t.Errorf("the slow call answered %q", got)
	}
}

// Close waits for a call in progress for its grace, then cancels it, and the client is told.
func TestCloseCancelsStuckCall(t *testing.T) {
	leakcheck.Check(t)
	path := filepath.Join(sockdir.New(t), "control.sock")
	started := make(chan struct{}, 1)
	s, err := Listen(path, &Options{Call: blockingCall(started, nil)})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() { answered <- raw(t, path, `{"tool":"slow"}`+"\n") }()
	<-started
	begin := time.Now()
	s.Close(100 * time.Millisecond)
	if d := time.Since(begin); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("Close took %s, want its grace of 100ms and little more", d)
	}
	if got := <-answered; !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, "context canceled") {
		t.Errorf("the cancelled call answered %q, want -32603", got)
	}
}
