package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/tools"
)

// Planner is an agent.Planner that asks an OpenAI-compatible chat-completions endpoint what to
// do. It is safe for concurrent turns: it keeps no state between them.
type Planner struct {
	o    Options
	url  string // the chat-completions URL for errors and logs, password redacted
	chat openai.ChatCompletionService
}

var _ agent.Planner = (*Planner)(nil)

// New checks o and returns a Planner. It does not contact the endpoint: a server that is down
// shows up as the error of the first turn, so `serve` can start before the model server does.
func New(o *Options) (*Planner, error) {
	c, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(c.BaseURL) // checked by withDefaults
	p := &Planner{o: c, url: strings.TrimSuffix(u.Redacted(), "/") + "/chat/completions"}
	// NewChatCompletionService rather than openai.NewClient: the client would also read
	// OPENAI_API_KEY, OPENAI_BASE_URL and friends from the environment, and send a cloud key to
	// a local server nobody gave it to.
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL),
		option.WithHTTPClient(c.HTTPClient),
		// No retries: a turn has a deadline and a person waiting; a retry storm against a
		// server that is down or overloaded only makes both worse. The person can ask again.
		option.WithMaxRetries(0),
		option.WithMiddleware(p.checkResponse),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	p.chat = openai.NewChatCompletionService(opts...)
	return p, nil
}

// String names the model and the endpoint, for logs.
func (p *Planner) String() string { return fmt.Sprintf("llm %s at %s", p.o.Model, p.url) }

// Plan runs one turn: it sends the conversation and the tools, streams the reply's text to
// t.Chunk and any reasoning to t.Thought, runs the tools the model asks for with t.Call and
// feeds their results back, until the model answers without asking for tools or
// Options.MaxToolRounds rounds have run (then ErrToolRounds).
func (p *Planner) Plan(ctx context.Context, t agent.TurnContext) error {
	decls := t.Tools()
	toolParams, err := functionTools(decls)
	if err != nil {
		return err
	}
	msgs := p.messages(t)
	for round := 0; ; round++ {
		params := openai.ChatCompletionNewParams{
			Model:    p.o.Model,
			Messages: msgs,
			Tools:    toolParams,
		}
		if p.o.Temperature != nil {
			params.Temperature = openai.Float(*p.o.Temperature)
		}
		p.o.Logger.DebugContext(ctx, "request", "round", round, "messages", len(msgs), "tools", len(toolParams))
		r, err := p.complete(ctx, t, params)
		if err != nil {
			return err
		}
		if len(r.calls) == 0 {
			return nil
		}
		if round >= p.o.MaxToolRounds {
			return fmt.Errorf("%w: it asked for %s again after %d rounds of tool calls; the turn was stopped",
				ErrToolRounds, r.callNames(), p.o.MaxToolRounds)
		}
		msgs = append(msgs, r.assistantMessage(round))
		// One call after the other, in the model's order: calls to one device are serialized
		// there anyway, and a device that sees its tools in a stable order is easier to follow.
		for i := range r.calls {
			c := &r.calls[i]
			content, err := p.run(ctx, t, c, decls)
			if err != nil {
				return err
			}
			msgs = append(msgs, openai.ToolMessage(content, c.id))
		}
	}
}

// messages is the start of every request of a turn: the system prompt, the session's earlier
// exchanges, and what was just said.
func (p *Planner) messages(t agent.TurnContext) []openai.ChatCompletionMessageParamUnion {
	hist := t.History()
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, 2+2*len(hist))
	msgs = append(msgs, openai.SystemMessage(p.o.SystemPrompt))
	if p.o.Location != nil {
		now := time.Now
		if p.o.Now != nil {
			now = p.o.Now
		}
		t := now().In(p.o.Location)
		msgs = append(msgs, openai.SystemMessage(fmt.Sprintf("It is now %s, %s (time zone %s, UTC%s); reminder times are in this zone.",
			t.Weekday(), t.Format("2006-01-02 15:04"), p.o.Location, t.Format("-07:00"))))
	}
	for _, e := range hist {
		msgs = append(msgs, openai.UserMessage(e.User))
		if e.Reply != "" { // some servers refuse an assistant message with no content
			msgs = append(msgs, openai.AssistantMessage(e.Reply))
		}
	}
	return append(msgs, openai.UserMessage(t.Request().Text))
}

// functionTools declares every tool to the model as a function with its JSON Schema.
func functionTools(decls []tools.Declaration) ([]openai.ChatCompletionToolUnionParam, error) {
	var out []openai.ChatCompletionToolUnionParam // nil, not empty: some servers refuse "tools":[]
	for _, d := range decls {
		params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if d.Parameters != nil {
			b, err := json.Marshal(d.Parameters)
			if err != nil {
				return nil, fmt.Errorf("llm: tool %s: its schema does not marshal: %w", d.Name, err)
			}
			params = nil
			if err := json.Unmarshal(b, &params); err != nil {
				return nil, fmt.Errorf("llm: tool %s: its schema is not a JSON object: %w", d.Name, err)
			}
		}
		fn := shared.FunctionDefinitionParam{Name: d.Name, Parameters: params}
		if d.Description != "" {
			fn.Description = openai.String(d.Description)
		}
		out = append(out, openai.ChatCompletionFunctionTool(fn))
	}
	return out, nil
}

// run executes one tool call and returns what the model is told about it. Mistakes the model
// can correct (an unknown tool, arguments that are not JSON, a tool that answers an error) are
// told to it; errors of the turn itself (the device gone, the deadline) end the turn.
func (p *Planner) run(ctx context.Context, t agent.TurnContext, c *toolCall, decls []tools.Declaration) (string, error) {
	if !slices.ContainsFunc(decls, func(d tools.Declaration) bool { return d.Name == c.name }) {
		names := make([]string, len(decls))
		for i, d := range decls {
			names[i] = d.Name
		}
		p.o.Logger.DebugContext(ctx, "unknown tool", "tool", c.name)
		return fmt.Sprintf("error: there is no tool named %q; the tools are: %s", c.name, strings.Join(names, ", ")), nil
	}
	input, ok := c.input()
	if !ok {
		p.o.Logger.DebugContext(ctx, "tool arguments are not JSON", "tool", c.name)
		return fmt.Sprintf("error: the arguments of %s are not valid JSON: %s; call it again with a JSON object that matches its parameters",
			c.name, quote([]byte(c.args))), nil
	}
	p.o.Logger.DebugContext(ctx, "tool call", "tool", c.name, "input", string(input))
	res, err := t.Call(ctx, c.name, input)
	var te *agent.ToolError
	switch {
	case err == nil:
		if len(res) == 0 {
			return "null", nil
		}
		return string(res), nil
	case errors.As(err, &te):
		return "error: " + te.Error(), nil
	default:
		return "", fmt.Errorf("llm: tool %s: %w", c.name, err)
	}
}
