//go:build !devicectl_omit_serve || !devicectl_omit_sim

package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/hub/hubtest"
	"github.com/devicectl/devicectl/agent/web"
	"github.com/devicectl/devicectl/internal/testing/leakcheck"
)

// deviceTools declares a status tool, whose result the page reads when the device registers
// or changes its tools, and a query tool whose result is as long as its input asks; the version
// is in the status tool's description, so that each version is a change.
func deviceTools(version int) string {
	return fmt.Sprintf(deviceToolsFormat, version)
}

const deviceToolsFormat = `[
 {"name":"get_device_status","description":"Read the state (version %d).","main_type":"remote","sub_type":"query",
  "parameters":{"type":"object","properties":{}}},
 {"name":"dump","description":"Answer n bytes.","main_type":"remote","sub_type":"query",
  "parameters":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}
]`

const limitsMAC = "02-00-00-00-00-0A"

// bigDevice answers get_device_status with a volume and statusPad bytes of padding, and dump
// with n bytes.
func bigDevice(statusPad int) hubtest.Handler {
	return func(_ context.Context, tool string, input json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
		switch tool {
		case "get_device_status":
			return json.RawMessage(fmt.Sprintf(`{"volume":40,"pad":%q}`, strings.Repeat("x", statusPad))), nil
		case "dump":
			var in struct{ N int }
			json.Unmarshal(input, &in)
			return json.RawMessage(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("y", in.N))), nil
		}
		return nil, &jsonrpc2.Error{Code: -32601, Message: "no such tool"}
	}
}

// limitsServer serves a hub (at /device) and the page over it on loopback, with o (Hub and
// Agent filled in); connState, if set, sees the page's connections change state.
func limitsServer(t *testing.T, o *web.Options, connState func(net.Conn, http.ConnState)) (*httptest.Server, *hub.Hub) {
	t.Helper()
	h := hub.New(&hub.Options{ReadLimit: 4 << 20})
	o.Hub = h
	o.Agent = replyTurner{chunks: []string{"ok"}}
	w, err := web.New(o)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/device", h)
	mux.Handle("/", w)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ConnState = connState
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		w.Close()
		srv.Close()
		h.Close()
	})
	return srv, h
}

func dialDevice(t *testing.T, srv *httptest.Server, handle hubtest.Handler) *hubtest.Device {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	d, err := hubtest.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/device", &hubtest.Options{Handle: handle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A device answering its status with a megabyte, registering again and again, once made every
// page's snapshot hold each answer whole: 100 registrations, a 100 MB snapshot. The page keeps
// web_calls calls per device, each cut to web_call_bytes with a marker that says so, and still
// reads the volume from the whole answer.
func TestSnapshotBounded(t *testing.T) {
	leakcheck.Check(t)
	const (
		callBytes = 4 << 10
		calls     = 10
		regs      = 30
	)
	srv, _ := limitsServer(t, &web.Options{CallBytes: callBytes, Calls: calls}, nil)
	live, err := http.Get(srv.URL + "/web/events")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Body.Close()
	events := sseEvents(bufio.NewReader(live.Body))
	events() // the empty snapshot

	d := dialDevice(t, srv, bigDevice(1<<20))
	for i := range regs {
		if _, err := d.Register(t.Context(), limitsMAC, deviceTools(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Every registration reads the status once; the open page sees each read, cut.
	for n := 0; n < regs; {
		e, ok := events()
		if !ok {
			t.Fatalf("the stream ended after %d status reads", n)
		}
		if e[0] != "call" {
			continue
		}
		n++
		if len(e[1]) > 2*callBytes+1024 {
			t.Fatalf("a call event is %d bytes, over twice web_call_bytes (%d)", len(e[1]), callBytes)
		}
	}

	resp, err := http.Get(srv.URL + "/web/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	e, ok := sseEvents(bufio.NewReader(resp.Body))()
	if !ok || e[0] != "snapshot" {
		t.Fatalf("first event %q, want the snapshot", e[0])
	}
	if max := calls*(2*callBytes+1024) + 4096; len(e[1]) > max {
		t.Errorf("the snapshot is %d bytes after %d registrations answering 1 MB, want at most %d", len(e[1]), regs, max)
	}
	var snap struct {
		Devices []struct{ Volume *int }
		Calls   []struct {
			Tool   string
			Result json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(e[1]), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Calls) != calls {
		t.Errorf("the snapshot holds %d calls, want web_calls, %d", len(snap.Calls), calls)
	}
	for _, c := range snap.Calls {
		var s string
		if err := json.Unmarshal(c.Result, &s); err != nil || !strings.Contains(s, "[cut: ") || len(c.Result) > callBytes {
			t.Errorf("a %s result of 1 MB is kept as %d bytes %.60q..., want a string within %d bytes marked [cut: ...]", c.Tool, len(c.Result), c.Result, callBytes)
			break
		}
	}
	if len(snap.Devices) != 1 || snap.Devices[0].Volume == nil || *snap.Devices[0].Volume != 40 {
		t.Errorf("the device's volume is not read from its cut status: %+v", snap.Devices)
	}
}

// A page that stops reading its event stream is dropped once it falls a queue behind (it
// reconnects from a snapshot), even while the server is stuck writing to it: the connection is
// closed, and what was queued for it freed, without waiting for any write timeout.
func TestStalledPageDropped(t *testing.T) {
	leakcheck.Check(t)
	closed := make(chan struct{})
	var stalled atomic.Value // the stalled page's address, as the server sees it
	srv, h := limitsServer(t, &web.Options{CallBytes: 64 << 10}, func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed && c.RemoteAddr().String() == stalled.Load() {
			close(closed)
		}
	})
	if _, err := dialDevice(t, srv, bigDevice(0)).Register(t.Context(), limitsMAC, deviceTools(0)); err != nil {
		t.Fatal(err)
	}

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stalled.Store(conn.LocalAddr().String())
	fmt.Fprintf(conn, "GET /web/events HTTP/1.1\r\nHost: %s\r\n\r\n", srv.Listener.Addr())
	// Never read: calls of 64 KB each fill the socket's buffers, then the page's queue.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		select {
		case <-closed:
			t.Logf("dropped after %d calls", i)
			return
		default:
		}
		if i == 3000 || time.Now().After(deadline) {
			t.Fatalf("the page that reads nothing is still connected after %d calls of 64 KB", i)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := h.Call(ctx, limitsMAC, "dump", json.RawMessage(`{"n":65536}`))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
}
