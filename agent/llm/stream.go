package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/devicectl/devicectl/agent"
)

// reply is one streamed answer of the model, put back together.
type reply struct {
	text   strings.Builder
	calls  []toolCall // in the order they first appeared
	finish string     // the finish_reason; "" until the stream says it is done
}

// toolCall is one tool call assembled from its fragments across deltas.
type toolCall struct {
	index int64 // the delta's index, which ties the fragments together
	id    string
	name  string
	args  string // the fragments joined; a string, not a Builder, since calls are copied
}

// complete sends one request and streams its answer: text to t.Chunk, reasoning to t.Thought,
// tool calls collected for the caller to run.
func (p *Planner) complete(ctx context.Context, t agent.TurnContext, params openai.ChatCompletionNewParams) (*reply, error) {
	reqCtx, cancel := context.WithTimeoutCause(ctx, p.o.Timeout, ErrTimeout)
	defer cancel()
	stream := p.chat.NewStreaming(reqCtx, params)
	defer stream.Close()

	r := &reply{}
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			if ch.Index != 0 { // n is 1: other choices are not asked for
				continue
			}
			if s := reasoning(ch.Delta); s != "" {
				t.Thought(s)
			}
			if s := ch.Delta.Content; s != "" {
				r.text.WriteString(s)
				t.Chunk(s)
			}
			for _, d := range ch.Delta.ToolCalls {
				r.addToolDelta(d)
			}
			if ch.FinishReason != "" {
				r.finish = ch.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, p.streamError(ctx, reqCtx, err)
	}
	if r.finish == "" {
		// The SDK ends quietly at EOF; only finish_reason tells a whole answer from a cut one.
		return nil, &EndpointError{URL: p.url, Message: "the stream ended before the model finished (no finish_reason): the connection was cut or this is not a chat-completions endpoint"}
	}
	p.o.Logger.DebugContext(ctx, "answer", "finish_reason", r.finish, "text_bytes", r.text.Len(), "tool_calls", len(r.calls))
	return r, nil
}

// streamError says what went wrong with a request, naming the endpoint.
func (p *Planner) streamError(ctx, reqCtx context.Context, err error) error {
	if ctx.Err() != nil {
		// The turn was canceled or hit its deadline: that is the turn's error, not the endpoint's.
		return fmt.Errorf("llm: %s: %w", p.url, context.Cause(ctx))
	}
	if errors.Is(context.Cause(reqCtx), ErrTimeout) {
		return &EndpointError{URL: p.url, Message: fmt.Sprintf("no complete answer within %v (llm timeout)", p.o.Timeout), Err: ErrTimeout}
	}
	var ee *EndpointError
	if errors.As(err, &ee) {
		return ee
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return &EndpointError{URL: p.url, Message: "error in the stream: " + errorMessage(se.Event.Data), Err: err}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// ue names the URL again; keep only its cause.
		var oe *net.OpError
		if errors.As(ue.Err, &oe) && oe.Op == "dial" {
			return &EndpointError{URL: p.url, Message: "cannot connect: " + ue.Err.Error(), Err: ue.Err}
		}
		return &EndpointError{URL: p.url, Message: "request failed: " + ue.Err.Error(), Err: ue.Err}
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
		return &EndpointError{URL: p.url, Message: "sent a chunk that is not a chat-completion chunk: " + err.Error(), Err: err}
	}
	return &EndpointError{URL: p.url, Message: "the stream failed: " + err.Error(), Err: err}
}

// reasoning is the delta's reasoning text, which the SDK has no field for: DeepSeek, llama.cpp
// and older vLLM send "reasoning_content", Ollama and newer vLLM "reasoning". A server that
// sends both sends the same text twice, so the first one present wins.
func reasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, key := range [...]string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// addToolDelta adds one fragment to the call it belongs to: the one with the same index, unless
// the fragment brings a new id (some servers number every parallel call 0).
func (r *reply) addToolDelta(d openai.ChatCompletionChunkChoiceDeltaToolCall) {
	i := -1
	for j := len(r.calls) - 1; j >= 0; j-- {
		if r.calls[j].index == d.Index {
			i = j
			break
		}
	}
	if i < 0 || (d.ID != "" && r.calls[i].id != "" && d.ID != r.calls[i].id) {
		r.calls = append(r.calls, toolCall{index: d.Index})
		i = len(r.calls) - 1
	}
	c := &r.calls[i]
	if d.ID != "" {
		c.id = d.ID
	}
	// The name comes whole in the first fragment; a server that repeats it must not double it.
	if n := d.Function.Name; n != "" && n != c.name {
		c.name += n
	}
	c.args += d.Function.Arguments
}

// input is the call's arguments as JSON; no arguments at all is an empty object.
func (c *toolCall) input() (json.RawMessage, bool) {
	s := strings.TrimSpace(c.args)
	if s == "" {
		return json.RawMessage("{}"), true
	}
	if !json.Valid([]byte(s)) {
		return nil, false
	}
	return json.RawMessage(s), true
}

func (r *reply) callNames() string {
	names := make([]string, len(r.calls))
	for i, c := range r.calls {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// assistantMessage is the model's answer as it is fed back, so the tool results that follow it
// have the calls they answer. A call without an id gets one, since each tool message must name
// its call.
func (r *reply) assistantMessage(round int) openai.ChatCompletionMessageParamUnion {
	m := openai.ChatCompletionAssistantMessageParam{}
	if r.text.Len() > 0 {
		m.Content.OfString = openai.String(r.text.String())
	}
	for i := range r.calls {
		c := &r.calls[i]
		if c.id == "" {
			c.id = fmt.Sprintf("call_%d_%d", round, i)
		}
		args, ok := c.input()
		if !ok {
			// Arguments that are not JSON are sent back as {}: servers that render the history
			// through a chat template parse them and would refuse the whole request. The tool
			// message that follows quotes what the model actually sent.
			args = json.RawMessage("{}")
		}
		m.ToolCalls = append(m.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.id,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.name, Arguments: string(args)},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &m}
}
