package chaos

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/protocol"
)

// Garbage is a malformed or unexpected frame (or two) and what the device owes for it. The
// expectations are the protocol's: a frame that is not JSON is answered -32700 with id null, one
// that is JSON but no request or response -32600 (with its id when the id is readable), an
// unknown method with an id -32601, a notification or a response nothing at all.
type Garbage struct {
	Kind   string
	Type   websocket.MessageType
	Frames [][]byte
	Expect Expect
}

// Tools that garbage names: the device under test must serve an "echo" tool whose parameters
// are {"n": integer, "s": string} and that allows other members and returns its input decoded.
const EchoTool = "echo"

// deepest is the nesting depth encoding/json still accepts (its scanner refuses 10,001).
const deepest = 10000

type garbageMaker func(rng *rand.Rand, l *Line) Garbage

var garbageMakers = map[string]garbageMaker{
	"random-bytes": func(rng *rand.Rand, _ *Line) Garbage {
		b := make([]byte, rng.IntN(256))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return text(nullAnswer(), b)
	},
	"binary": func(rng *rand.Rand, l *Line) Garbage {
		// A perfectly good request, but in a binary frame: each message must be a text frame.
		g := text(nullAnswer(), ExecuteFrame(l.NewID(rng.IntN(2) == 0), EchoTool, `{"n":1}`))
		g.Type = websocket.MessageBinary
		return g
	},
	"bad-utf8-bytes": func(rng *rand.Rand, _ *Line) Garbage {
		return text(nullAnswer(), []byte("\xff\xfe\xfd{\"jsonrpc\":\"2.0\"}"))
	},
	"bad-utf8-id": func(rng *rand.Rand, l *Line) Garbage {
		// An id the device cannot echo exactly: answered -32600 with id null.
		id := json.RawMessage("\"\xff\xfe" + strings.Trim(string(l.NewID(false)), `"`) + "\"")
		return text(nullAnswer(), ExecuteFrame(id, EchoTool, `{"n":1}`))
	},
	"bad-utf8-method": func(rng *rand.Rand, l *Line) Garbage {
		id := l.NewID(rng.IntN(2) == 0)
		return text(answer(id, protocol.CodeMethodNotFound), []byte(`{"jsonrpc":"2.0","id":`+string(id)+",\"method\":\"mcp/\xff\xfe\",\"params\":{}}"))
	},
	"bad-utf8-tool": func(rng *rand.Rand, l *Line) Garbage {
		id := l.NewID(rng.IntN(2) == 0)
		return text(answer(id, protocol.CodeInvalidParams), []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"method":"`+protocol.MethodExecute+"\",\"params\":{\"tool_name\":\"\xff\xfe\",\"tool_input\":{}}}"))
	},
	"bad-utf8-input": func(rng *rand.Rand, l *Line) Garbage {
		// Valid for the schema (a string is a string): the tool runs and answers.
		id := l.NewID(rng.IntN(2) == 0)
		g := text(answer(id, 0, protocol.CodeBusy), ExecuteFrame(id, EchoTool, "{\"s\":\"\xff\xfe ok\"}"))
		g.Expect.Call = true
		return g
	},
	"surrogate-id": func(rng *rand.Rand, l *Line) Garbage {
		// A string id with a lone surrogate escape: valid JSON, but no Go string holds it, so a
		// decoder turns it into U+FFFD. The device must echo it exactly or, as for an id that is
		// not UTF-8, refuse it with id null; never answer to an id the server did not send. The
		// tool does not exist, so the answer comes inline either way.
		id := json.RawMessage(`"\ud800` + strings.Trim(string(l.NewID(false)), `"`) + `"`)
		return text(Expect{ID: id, NullOK: true}, ExecuteFrame(id, "no_such_tool", `{}`))
	},
	"deep-array": func(*rand.Rand, *Line) Garbage {
		// Exactly as deep as encoding/json goes: valid JSON, but a batch, which is refused.
		return text(nullAnswer(), []byte(strings.Repeat("[", deepest)+strings.Repeat("]", deepest)))
	},
	"deep-object": func(*rand.Rand, *Line) Garbage {
		return text(nullAnswer(), []byte(strings.Repeat(`{"a":`, deepest)+"1"+strings.Repeat("}", deepest)))
	},
	"deep-params": func(rng *rand.Rand, l *Line) Garbage {
		// Too deep to parse: the id cannot be read, and the device need not try.
		id := l.NewID(rng.IntN(2) == 0)
		input := `{"x":` + strings.Repeat("[", deepest) + strings.Repeat("]", deepest) + "}"
		g := text(Expect{ID: id, NullOK: true}, ExecuteFrame(id, EchoTool, input))
		return g
	},
	"deep-input": func(rng *rand.Rand, l *Line) Garbage {
		// Deep, but parsable: the tool gets it. Any answer will do, but exactly one.
		id := l.NewID(rng.IntN(2) == 0)
		const depth = deepest - 10
		input := `{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}"
		g := text(Expect{ID: id, Answers: 1}, ExecuteFrame(id, EchoTool, input))
		g.Expect.Call = true
		return g
	},
	"huge-id": func(rng *rand.Rand, l *Line) Garbage {
		// Numbers no integer holds, which JSON-RPC 2.0 allows as ids: served like any call and
		// answered with the id as received, digit for digit. Built on a fresh id, so unique.
		n := string(l.NewID(true))
		ids := []string{n + "e400", "-" + n + "e400", strings.Repeat("9", 100) + n, "1" + strings.Repeat("0", 99) + n, n + ".5", "-" + n}
		id := json.RawMessage(ids[rng.IntN(len(ids))])
		g := text(answer(id, 0, protocol.CodeBusy), ExecuteFrame(id, EchoTool, `{"n":1}`))
		g.Expect.Call = true
		return g
	},
	"huge-input": func(rng *rand.Rand, l *Line) Garbage {
		id := l.NewID(rng.IntN(2) == 0)
		nums := []string{"1e400", "-1e400", strings.Repeat("9", 100), "1e-400", "123456789012345678901234567890.5"}
		g := text(Expect{ID: id, Answers: 1}, ExecuteFrame(id, EchoTool, `{"n":`+nums[rng.IntN(len(nums))]+`}`))
		g.Expect.Call = true
		return g
	},
	"huge-notification": func(rng *rand.Rand, _ *Line) Garbage {
		return text(Expect{}, []byte(`{"jsonrpc":"2.0","method":"`+protocol.MethodAIMessage+`","params":{"type":"chunk","content":1e400}}`))
	},
	"dup-id": func(rng *rand.Rand, l *Line) Garbage {
		// Two requests with one id: the device does not track ids, so both are answered.
		id := l.NewID(rng.IntN(2) == 0)
		f := ExecuteFrame(id, EchoTool, `{"n":2}`)
		g := Garbage{Type: websocket.MessageText, Frames: [][]byte{f, f}, Expect: answer(id, 0, protocol.CodeBusy)}
		g.Expect.Answers, g.Expect.Call = 2, true
		return g
	},
	"dup-id-member": func(rng *rand.Rand, l *Line) Garbage {
		a, b := l.NewID(false), l.NewID(true)
		return text(nullAnswer(), []byte(`{"jsonrpc":"2.0","id":`+string(a)+`,"id":`+string(b)+`,"method":"`+protocol.MethodExecute+`","params":{"tool_name":"echo","tool_input":{}}}`))
	},
	"dup-method-member": func(rng *rand.Rand, l *Line) Garbage {
		id := l.NewID(rng.IntN(2) == 0)
		return text(answer(id, protocol.CodeInvalidRequest), []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"method":"chaos/a","method":"`+protocol.MethodExecute+`","params":{"tool_name":"echo","tool_input":{}}}`))
	},
	"stray-response": func(rng *rand.Rand, l *Line) Garbage {
		// Answers to requests the device never made: ignored, never answered.
		id := l.NewID(rng.IntN(2) == 0)
		frames := []string{
			`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"status":"success"}}`,
			`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32000,"message":"no"}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			`{"jsonrpc":"2.0","id":"reg-999999","result":{"status":"registered"}}`,
		}
		return text(Expect{}, []byte(frames[rng.IntN(len(frames))]))
	},
	"stray-ack": func(rng *rand.Rand, l *Line) Garbage {
		// The registration accepted a second time.
		id := l.RegistrationID()
		if id == nil {
			id = json.RawMessage(`"reg-0"`)
		}
		return text(Expect{}, responseFrame(id, `{"status":"registered"}`))
	},
	"unknown-notification": func(rng *rand.Rand, _ *Line) Garbage {
		methods := []string{"chaos/unknown", protocol.MethodExecute, protocol.MethodRegisterTools, "$/cancelRequest", ""}
		m, _ := json.Marshal(methods[rng.IntN(len(methods))])
		return text(Expect{}, []byte(`{"jsonrpc":"2.0","method":`+string(m)+`,"params":{"tool_name":"echo","tool_input":{}}}`))
	},
	"unknown-type": func(rng *rand.Rand, _ *Line) Garbage {
		// Not chunks or finals: handed to Render, or dropped, but never shown as reply text.
		params := []string{`{"type":"bogus","content":"x"}`, `{"type":"thought","content":"hmm"}`, `["chunk","x"]`, `{"type":7}`, `null`}
		p := params[rng.IntN(len(params))]
		e := Expect{}
		if p == "null" {
			e = nullAnswer() // params, when present, must be an object or an array: -32600
		}
		return text(e, []byte(`{"jsonrpc":"2.0","method":"`+protocol.MethodAIMessage+`","params":`+p+`}`))
	},
	"unknown-method": func(rng *rand.Rand, l *Line) Garbage {
		id := l.NewID(rng.IntN(2) == 0)
		methods := []string{"chaos/unknown", protocol.MethodRegisterTools, protocol.MethodAIMessage, "rpc.discover"}
		m, _ := json.Marshal(methods[rng.IntN(len(methods))])
		return text(answer(id, protocol.CodeMethodNotFound), []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"method":`+string(m)+`,"params":{"type":"chunk","content":"never shown"}}`))
	},
	"not-jsonrpc": func(rng *rand.Rand, l *Line) Garbage {
		if rng.IntN(3) == 0 {
			id := l.NewID(rng.IntN(2) == 0)
			return text(answer(id, protocol.CodeInvalidRequest), []byte(`{"jsonrpc":"1.0","id":`+string(id)+`,"method":"`+protocol.MethodExecute+`"}`))
		}
		frames := []string{`{"foo":1}`, `null`, `[]`, `"jsonrpc"`, `42`, `{}`, `{"jsonrpc":"2.0"}`, ``, `   `}
		return text(nullAnswer(), []byte(frames[rng.IntN(len(frames))]))
	},
}

// GarbageKinds lists the kinds MakeGarbage makes, sorted.
func GarbageKinds() []string {
	kinds := make([]string, 0, len(garbageMakers))
	for k := range garbageMakers {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// MakeGarbage returns garbage of the named kind for line l, varied by rng.
func MakeGarbage(kind string, rng *rand.Rand, l *Line) Garbage {
	mk, ok := garbageMakers[kind]
	if !ok {
		panic(fmt.Sprintf("chaos: no garbage of kind %q", kind))
	}
	g := mk(rng, l)
	g.Kind = kind
	g.Expect.Kind = "garbage:" + kind
	return g
}

// SendGarbage records what the device owes for g and sends its frames.
func (l *Line) SendGarbage(g Garbage) error {
	if err := l.srv.led.expect(l.id, g.Expect, false); err != nil {
		return err
	}
	for _, f := range g.Frames {
		if err := l.write(g.Type, f); err != nil {
			return err
		}
	}
	return nil
}

func text(e Expect, frame []byte) Garbage {
	return Garbage{Type: websocket.MessageText, Frames: [][]byte{frame}, Expect: e}
}

// nullAnswer is owed by a frame the device cannot read an id from.
func nullAnswer() Expect { return Expect{Null: true} }

// answer is owed by a frame with a readable id: one answer, with one of codes (0: a result).
func answer(id json.RawMessage, codes ...int64) Expect {
	return Expect{ID: id, Answers: 1, Codes: codes}
}
