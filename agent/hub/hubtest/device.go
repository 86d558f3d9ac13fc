// Package hubtest is a small device for tests of the agent server: it dials a hub over a real
// WebSocket with the transport package, registers tools and answers mcp/tool/execute with a
// function the test gives, and records the mcp/ai/message notifications it receives. It speaks
// the device protocol from scratch and does not import package device: the agent and the device
// meet only on the wire.
package hubtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/transport"
)

// Tools is a registration's params.tools for tests: amplify_volume (control, level 0-100),
// set_expression (control, an enum) and get_status (query, no input).
const Tools = `[
 {"name":"amplify_volume","description":"Set the speaker volume.","main_type":"remote","sub_type":"control",
  "parameters":{"type":"object","properties":{"level":{"type":"integer","minimum":0,"maximum":100}},"required":["level"]}},
 {"name":"set_expression","description":"Show a face.","main_type":"remote","sub_type":"control",
  "parameters":{"type":"object","properties":{"expression":{"type":"string","enum":["smile","amazed","idle"]}},"required":["expression"]}},
 {"name":"get_status","description":"Read the device's state.","main_type":"remote","sub_type":"query",
  "parameters":{"type":"object","properties":{}}}
]`

// Handler answers one tool call: a result, or a JSON-RPC error. ctx ends when the device closes;
// what a handler returns after that is not sent.
type Handler func(ctx context.Context, tool string, input json.RawMessage) (json.RawMessage, *jsonrpc2.Error)

// Options configure a Device.
type Options struct {
	Token    string // sent as a bearer token when set
	ClientID string // the Client-Id header; "" sends none
	Handle   Handler
	// PingInterval is passed to transport.Dial; 0 disables keepalive (tests need none).
	PingInterval time.Duration
}

// Device is one test device on one line.
type Device struct {
	s      *transport.Stream
	handle Handler
	ctx    context.Context
	cancel context.CancelFunc
	nextID atomic.Uint64

	mu      sync.Mutex
	waiting map[string]chan *transport.Message // registrations awaiting their answer, by id

	messages chan protocol.AIMessage
	calls    atomic.Int64
	wg       sync.WaitGroup
}

// Dial connects to url (ws://...) and starts the device's read loop; it does not register.
func Dial(ctx context.Context, url string, o *Options) (*Device, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	h := http.Header{}
	if opts.ClientID != "" {
		h.Set("Client-Id", opts.ClientID)
	}
	ping := opts.PingInterval
	if ping == 0 {
		ping = -1
	}
	s, err := transport.Dial(ctx, url, &transport.DialOptions{Header: h, Token: opts.Token, PingInterval: ping})
	if err != nil {
		return nil, err
	}
	d := &Device{
		s:        s,
		handle:   opts.Handle,
		waiting:  make(map[string]chan *transport.Message),
		messages: make(chan protocol.AIMessage, 1024),
	}
	if d.handle == nil {
		d.handle = Echo
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.wg.Go(d.read)
	return d, nil
}

// testWait bounds Connect's dial and MustRegister's registration: milliseconds on loopback.
const testWait = 20 * time.Second

// Connect dials url for test t, failing it if that fails, and closes the device when the test
// ends (before what the test started earlier: cleanups run last first).
func Connect(t testing.TB, url string, o *Options) *Device {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	d, err := Dial(ctx, url, o)
	if err != nil {
		t.Fatalf("hubtest: dial: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// MustRegister registers Tools as mac, failing t when the registration is refused.
func (d *Device) MustRegister(t testing.TB, mac string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	if _, err := d.Register(ctx, mac, Tools); err != nil {
		t.Fatalf("hubtest: register %s: %v", mac, err)
	}
}

// Echo answers every call with {"status":"success","tool":...,"input":...}.
func Echo(_ context.Context, tool string, input json.RawMessage) (json.RawMessage, *jsonrpc2.Error) {
	b, _ := json.Marshal(map[string]any{"status": "success", "tool": tool, "input": input})
	return b, nil
}

// ErrRefused is a registration the server answered with an error.
var ErrRefused = errors.New("hubtest: registration refused")

// Register sends mcp/registerTools and waits for the answer: the answer's message, and an error
// wrapping ErrRefused (with the error's text) when it is an error.
func (d *Device) Register(ctx context.Context, mac, tools string) (*transport.Message, error) {
	raw := json.RawMessage(`{"mac_addr":` + strconv.Quote(mac) + `,"tools":` + tools + `}`)
	return d.RegisterRaw(ctx, raw)
}

// RegisterRaw is Register with params as given, for malformed registrations.
func (d *Device) RegisterRaw(ctx context.Context, params json.RawMessage) (*transport.Message, error) {
	id := `"reg-` + strconv.FormatUint(d.nextID.Add(1), 10) + `"`
	ch := make(chan *transport.Message, 1)
	d.mu.Lock()
	d.waiting[id] = ch
	d.mu.Unlock()
	if err := d.s.WriteRequest(json.RawMessage(id), protocol.MethodRegisterTools, params); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m, fmt.Errorf("%w: %s (%d) %s", ErrRefused, m.Error.Message, m.Error.Code, data(m.Error))
		}
		return m, nil
	case <-d.s.Done():
		return nil, fmt.Errorf("hubtest: line closed: %w", d.s.Err())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Request sends any request (mcp/user/text, say) and waits for its answer message, error or
// result.
func (d *Device) Request(ctx context.Context, method string, params any) (*transport.Message, error) {
	id := `"req-` + strconv.FormatUint(d.nextID.Add(1), 10) + `"`
	ch := make(chan *transport.Message, 1)
	d.mu.Lock()
	d.waiting[id] = ch
	d.mu.Unlock()
	if err := d.s.WriteRequest(json.RawMessage(id), method, params); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-d.s.Done():
		return nil, fmt.Errorf("hubtest: line closed: %w", d.s.Err())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Notify sends a notification (mcp/user/interrupt, say).
func (d *Device) Notify(method string, params any) error {
	return d.s.WriteNotification(method, params)
}

func data(e *jsonrpc2.Error) string {
	if e.Data == nil {
		return ""
	}
	return string(*e.Data)
}

// Messages delivers the mcp/ai/message notifications in arrival order.
func (d *Device) Messages() <-chan protocol.AIMessage { return d.messages }

// Calls is how many mcp/tool/execute requests the device received.
func (d *Device) Calls() int64 { return d.calls.Load() }

// Done is closed when the line is gone.
func (d *Device) Done() <-chan struct{} { return d.s.Done() }

// Close closes the line and waits for the device's goroutines; running handlers see their
// context end.
func (d *Device) Close() error {
	d.cancel()
	err := d.s.Close()
	d.wg.Wait()
	return err
}

func (d *Device) read() {
	for {
		m, err := d.s.Read()
		if err != nil {
			d.cancel()
			return
		}
		switch m.Kind {
		case transport.KindResponse:
			d.mu.Lock()
			ch := d.waiting[string(m.ID)]
			delete(d.waiting, string(m.ID))
			d.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case transport.KindNotification:
			if m.Method != protocol.MethodAIMessage {
				continue
			}
			var msg protocol.AIMessage
			if json.Unmarshal(m.Params, &msg) == nil {
				select {
				case d.messages <- msg:
				default: // a test that does not read messages must not stall the line
				}
			}
		case transport.KindRequest:
			if m.Method != protocol.MethodExecute {
				_ = d.s.WriteError(m.ID, protocol.CodeMethodNotFound, "Method not found", nil)
				continue
			}
			d.calls.Add(1)
			var p protocol.ExecuteParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				_ = d.s.WriteError(m.ID, protocol.CodeInvalidParams, "Invalid params", protocol.ErrorData{Details: err.Error()})
				continue
			}
			d.wg.Go(func() {
				res, rpcErr := d.handle(d.ctx, p.ToolName, p.ToolInput)
				if d.ctx.Err() != nil {
					return // the device is closing: a dying device answers nothing
				}
				if rpcErr != nil {
					var data any
					if rpcErr.Data != nil {
						data = *rpcErr.Data
					}
					_ = d.s.WriteError(m.ID, rpcErr.Code, rpcErr.Message, data)
					return
				}
				_ = d.s.WriteResult(m.ID, res)
			})
		}
	}
}
