package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/protocol"
)

// DropMode is how the server drops a line.
type DropMode int

const (
	DropClose     DropMode = iota // close the TCP connection (FIN), no close frame
	DropReset                     // abort it with a TCP RST
	DropGoingAway                 // close frame 1001 and the closing handshake
)

var dropModeNames = [...]string{"close", "reset", "going-away"}

func (m DropMode) String() string {
	if m < 0 || int(m) >= len(dropModeNames) {
		return fmt.Sprintf("DropMode(%d)", int(m))
	}
	return dropModeNames[m]
}

// Line is one device connection as the server holds it. Sends record what the device owes in the
// ledger before the frame leaves, so an answer can never arrive before it is expected.
type Line struct {
	id    int
	srv   *Server
	ws    *websocket.Conn
	raw   *stallConn
	regID json.RawMessage // the id of the device's registration request; guarded by srv.mu

	seq  atomic.Int64 // for NewID
	once sync.Once
	done chan struct{} // closed when the server has seen the line end
}

// ID numbers the line: 1 for the first connection, then on.
func (l *Line) ID() int { return l.id }

// Done is closed once the line has ended, whoever ended it.
func (l *Line) Done() <-chan struct{} { return l.done }

func (l *Line) ended() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// end is called by the read loop when the line is gone.
func (l *Line) end(err error) {
	l.once.Do(func() {
		l.ws.CloseNow()
		why := err.Error()
		if code := websocket.CloseStatus(err); code != -1 {
			why = fmt.Sprintf("close %d", int(code))
		}
		l.srv.led.lineEnded(l.id, time.Now(), why)
		close(l.done)
	})
}

// NewID returns an id not used before on this line: a number (0 first) or a string.
func (l *Line) NewID(numeric bool) json.RawMessage {
	n := l.seq.Add(1) - 1
	if numeric {
		return json.RawMessage(strconv.FormatInt(n, 10))
	}
	return json.RawMessage(`"c` + strconv.FormatInt(n, 10) + `"`)
}

// write sends one frame, bounded in time: a write that cannot finish means the line is dead.
func (l *Line) write(typ websocket.MessageType, frame []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.ws.Write(ctx, typ, frame); err != nil {
		return fmt.Errorf("chaos: line %d: write: %w", l.id, err)
	}
	return nil
}

// Send records what the device owes for frame and sends it. It fails when the line is down.
func (l *Line) Send(typ websocket.MessageType, frame []byte, e Expect) error {
	if err := l.srv.led.expect(l.id, e, false); err != nil {
		return err
	}
	return l.write(typ, frame)
}

// Execute sends an mcp/tool/execute with the given id, tool and raw tool_input (omitted when
// input is empty). e says what answers are acceptable; its ID, Call and Answers are filled in.
func (l *Line) Execute(id json.RawMessage, tool, input string, e Expect) error {
	e.ID, e.Call = id, true
	if e.Answers == 0 {
		e.Answers = 1
	}
	if e.Kind == "" {
		e.Kind = "execute"
	}
	return l.Send(websocket.MessageText, ExecuteFrame(id, tool, input), e)
}

// ExecuteFrame returns the text of an mcp/tool/execute request.
func ExecuteFrame(id json.RawMessage, tool, input string) []byte {
	name, _ := json.Marshal(tool)
	params := `{"tool_name":` + string(name)
	if input != "" {
		params += `,"tool_input":` + input
	}
	params += "}"
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"method":"` + protocol.MethodExecute + `","params":` + params + `}`)
}

// Message sends one mcp/ai/message. Chunks and finals must be unique by type and content: the
// ledger finds each one again by them when it is rendered.
func (l *Line) Message(typ, content string) error {
	if typ == protocol.MessageChunk || typ == protocol.MessageFinal {
		if err := l.srv.led.notification(l.id, typ, content); err != nil {
			return err
		}
	}
	b, err := json.Marshal(struct {
		JSONRPC string             `json:"jsonrpc"`
		Method  string             `json:"method"`
		Params  protocol.AIMessage `json:"params"`
	}{"2.0", protocol.MethodAIMessage, protocol.AIMessage{Type: typ, Content: content}})
	if err != nil {
		return err
	}
	return l.write(websocket.MessageText, b)
}

// Sync sends a probe the device answers inline and waits for its answer or the line's end. The
// ledger then checks that everything sent before it and handled inline was handled.
func (l *Line) Sync(ctx context.Context) error {
	id := json.RawMessage(`"sync-` + strconv.FormatInt(l.seq.Add(1), 10) + `"`)
	e := Expect{Kind: "sync", ID: id, Answers: 1, Codes: []int64{protocol.CodeMethodNotFound}}
	if err := l.srv.led.expect(l.id, e, true); err != nil {
		return err
	}
	if err := l.write(websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"method":"chaos/sync"}`)); err != nil {
		return err
	}
	return l.Await(ctx, id)
}

// Await waits until every one of ids has been answered as often as expected, or the line is
// gone, or ctx is done.
func (l *Line) Await(ctx context.Context, ids ...json.RawMessage) error {
	return l.srv.led.Await(ctx, func() bool {
		return l.ended() || l.srv.led.Pending(l.id, ids...) == 0
	})
}

// Drop breaks the line the given way. It returns once the break is under way; Done tells when
// the server has seen the end.
func (l *Line) Drop(mode DropMode) {
	l.srv.led.cut(l.id, time.Now(), false)
	switch mode {
	case DropReset:
		l.raw.reset()
	case DropGoingAway:
		l.ws.Close(websocket.StatusGoingAway, "chaos")
	default:
		l.ws.CloseNow()
	}
}

// Stall makes the line a black hole (see stallConn): from now on only the device's keepalive
// can tell it is dead. The line ends when the device closes its end.
func (l *Line) Stall() {
	l.srv.led.cut(l.id, time.Now(), true)
	l.raw.stall()
}

// ExpectDeviceClose tells the ledger that the device may close this line itself: the next frame
// is one it must refuse by closing (over its read limit).
func (l *Line) ExpectDeviceClose() { l.srv.led.closeOK(l.id, false) }

// RegistrationID is the id of the device's registration request on this line.
func (l *Line) RegistrationID() json.RawMessage {
	l.srv.mu.Lock()
	defer l.srv.mu.Unlock()
	return l.regID
}
