package chaos_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/internal/testing/chaos"
	"github.com/devicectl/devicectl/protocol"
)

// Regression tests for invariant violations the chaos run found. Each talks raw WebSocket to a
// real agent, so the failure reads without the ledger in between.

// rawLine accepts the agent's first connection, accepts its registration and returns the line.
func rawLine(t *testing.T) *websocket.Conn {
	t.Helper()
	conns := make(chan *websocket.Conn, 1)
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		select {
		case conns <- c:
			<-hold // the test reads the line; the handler only keeps it open
		default:
			c.CloseNow() // a reconnection after the line the test holds: not wanted
		}
	}))
	t.Cleanup(func() { close(hold); srv.Close() })

	led := chaos.NewLedger(bounds())
	runAgent(t, agentOptions("ws"+strings.TrimPrefix(srv.URL, "http")+"/", chaosRegistry(t, nil, nil, false), led), nil)
	var c *websocket.Conn
	select {
	case c = <-conns:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not connect")
	}
	t.Cleanup(func() { c.CloseNow() })
	var reg struct{ ID json.RawMessage }
	if err := json.Unmarshal(readFrame(t, c), &reg); err != nil {
		t.Fatal(err)
	}
	writeFrame(t, c, `{"jsonrpc":"2.0","id":`+string(reg.ID)+`,"result":{"status":"registered"}}`)
	return c
}

func readFrame(t *testing.T, c *websocket.Conn) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("reading from the agent: %v", err)
	}
	return b
}

func writeFrame(t *testing.T, c *websocket.Conn, frame string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatalf("writing to the agent: %v", err)
	}
}

// TestRegressionLoneSurrogateID: the server sends a request whose string id holds a lone
// surrogate escape, "\ud800x". It is valid JSON (RFC 8259 allows any \uXXXX) and a JavaScript
// server can produce it, but no Go string holds it: transport.checkID (transport/frame.go, the
// utf8.Valid check on the raw id) lets it through because the raw bytes are ASCII, and
// stringValue (transport/message.go) decodes it to U+FFFD. The device then answers id "\ufffdx",
// an id the server never sent: its request goes unanswered, against "the id is echoed back
// exactly as received". Found by the chaos run's odd ids (garbage kind surrogate-id).
//
// Either fix passes: echo the id exactly, or refuse it as the transport already refuses an id
// that is not UTF-8 (-32600, id null).
func TestRegressionLoneSurrogateID(t *testing.T) {
	checkLeaks(t)
	c := rawLine(t)
	writeFrame(t, c, `{"jsonrpc":"2.0","id":"\ud800x","method":"`+protocol.MethodExecute+`","params":{"tool_name":"echo","tool_input":{"n":1}}}`)
	b := readFrame(t, c)
	var resp struct {
		ID    json.RawMessage
		Error *struct{ Code int64 }
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	exact := strings.EqualFold(string(resp.ID), `"\ud800x"`)
	refused := string(resp.ID) == "null" && resp.Error != nil && resp.Error.Code == protocol.CodeInvalidRequest
	if !exact && !refused {
		t.Errorf(`request with id "\ud800x" answered with id %s (%s); want that id echoed exactly, or -32600 with id null`, resp.ID, b)
	}
}
