package agenttest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/devicectl/devicectl/protocol"
)

// Voice is what a Server does with what a device hears (Options.Voice). Each handler runs on a
// goroutine of its own, so it may stream a reply to the device (Device.Say) before it returns.
// A nil handler leaves its feature out: the method is answered -32601.
type Voice struct {
	// Text answers mcp/user/text; a non-nil error is sent back as the answer's error.
	Text func(ctx context.Context, d *Device, p protocol.UserTextParams) (protocol.UserResult, *jsonrpc2.Error)
	// Audio answers mcp/user/audio, its samples already checked and decoded from base64.
	Audio func(ctx context.Context, d *Device, p protocol.UserAudioParams) (protocol.UserResult, *jsonrpc2.Error)
	// Interrupt is told of mcp/user/interrupt.
	Interrupt func(d *Device)
}

// features lists what v takes, for the registration answer; nil for a nil v (a seed-002 server).
func (v *Voice) features() []string {
	if v == nil {
		return nil
	}
	f := []string{}
	if v.Text != nil {
		f = append(f, protocol.FeatureUserText)
	}
	if v.Audio != nil {
		f = append(f, protocol.FeatureUserAudio)
	}
	return f
}

// user answers an mcp/user/text or mcp/user/audio request of a registered device.
func (h *handler) user(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	v := h.srv.opts.Voice
	fail := func(code int64, message, details string) {
		e := &jsonrpc2.Error{Code: code, Message: message}
		if details != "" {
			e.SetError(protocol.ErrorData{Details: details})
		}
		conn.ReplyWithError(ctx, req.ID, e)
	}
	if (req.Method == protocol.MethodUserText && v.Text == nil) || (req.Method == protocol.MethodUserAudio && v.Audio == nil) {
		fail(protocol.CodeMethodNotFound, "Method not found", "")
		return
	}
	d := h.device.Load()
	if d == nil {
		fail(protocol.CodeInvalidRequest, "Invalid Request", "register with mcp/registerTools first")
		return
	}
	var raw []byte
	if req.Params != nil {
		raw = *req.Params
	}
	var answer func() (protocol.UserResult, *jsonrpc2.Error)
	switch req.Method {
	case protocol.MethodUserText:
		var p protocol.UserTextParams
		if err := json.Unmarshal(raw, &p); err != nil || p.Text == "" {
			fail(protocol.CodeInvalidParams, "Invalid params", `want {"text":"...","lang":"..."}`)
			return
		}
		answer = func() (protocol.UserResult, *jsonrpc2.Error) { return v.Text(ctx, d, p) }
	default:
		var p protocol.UserAudioParams
		if err := json.Unmarshal(raw, &p); err != nil {
			fail(protocol.CodeInvalidParams, "Invalid params", fmt.Sprintf("audio params: %v", err))
			return
		}
		if p.Format != protocol.AudioFormat || p.Rate != protocol.AudioRate || p.Channels != 1 || len(p.Audio)%2 != 0 {
			fail(protocol.CodeInvalidParams, "Invalid params", fmt.Sprintf("want %s, %d Hz, 1 channel; got %s, %d Hz, %d channels, %d bytes", protocol.AudioFormat, protocol.AudioRate, p.Format, p.Rate, p.Channels, len(p.Audio)))
			return
		}
		answer = func() (protocol.UserResult, *jsonrpc2.Error) { return v.Audio(ctx, d, p) }
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		res, rpcErr := answer()
		if rpcErr != nil {
			conn.ReplyWithError(ctx, req.ID, rpcErr)
			return
		}
		conn.Reply(ctx, req.ID, res)
	}()
}
