package mcpset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/tools"
)

// maxErrorText bounds the server's text quoted in a failed call's error: it goes to the agent
// server, and on to a person, in one line.
const maxErrorText = 1024

// list reads the server's tools (every page) and makes device tools of those the device can
// carry, warning once about each it cannot.
func (s *Set) list(ctx context.Context, cs *mcp.ClientSession) ([]*tools.Tool, error) {
	var listed []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		listed = append(listed, t)
	}
	s.warnMissing(listed)
	// A scratch registry applies the device's own checks (name, description, schema): what it
	// refuses here, the device's registry would refuse later with no word of the server.
	check := tools.NewRegistry()
	var out []*tools.Tool
	warned := map[string]string{} // this list's: a server that renames its tools cannot grow it
	for _, mt := range listed {
		if len(s.opts.Include) > 0 && !slices.Contains(s.opts.Include, mt.Name) {
			continue
		}
		t, err := s.tool(mt)
		if err == nil {
			err = check.Add(t)
		}
		if err != nil {
			s.warnOnce(mt.Name, err)
			warned[mt.Name] = err.Error()
			continue
		}
		out = append(out, t)
	}
	s.mu.Lock()
	s.warned = warned
	s.mu.Unlock()
	return out, nil
}

// tool makes a device tool of the server's tool mt.
func (s *Set) tool(mt *mcp.Tool) (*tools.Tool, error) {
	raw, err := json.Marshal(mt.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	var params *jsonschema.Schema
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil, fmt.Errorf("inputSchema is not a JSON Schema the device can carry: %w", err)
	}
	desc := mt.Description
	if strings.TrimSpace(desc) == "" {
		desc = mt.Title // better than nothing for the model, and some servers only set it
	}
	sub := tools.Query
	if st, ok := s.opts.SubTypes[mt.Name]; ok {
		sub = st
	}
	return &tools.Tool{
		Declaration: tools.Declaration{
			Name:        s.opts.Prefix + mt.Name,
			Description: desc,
			MainType:    tools.Remote,
			SubType:     sub,
			Parameters:  params,
		},
		Timeout: s.opts.Timeout,
		Handler: s.forward(mt.Name),
	}, nil
}

// warnOnce says why the server's tool name is left out, once for as long as the reason stays:
// a server that re-lists (or floods list_changed) does not repeat it.
func (s *Set) warnOnce(name string, err error) {
	s.mu.Lock()
	said := s.warned[name] == err.Error()
	s.mu.Unlock()
	if !said {
		s.log.Warn("an MCP server's tool cannot be a device tool; left out, the rest are served", "tool", name, "err", err)
	}
}

// warnMissing says, when it changes, which Include entries the server does not list: a typo
// would otherwise go unnoticed.
func (s *Set) warnMissing(listed []*mcp.Tool) {
	var missing []string
	for _, name := range s.opts.Include {
		if !slices.ContainsFunc(listed, func(t *mcp.Tool) bool { return t.Name == name }) {
			missing = append(missing, name)
		}
	}
	m := strings.Join(missing, ", ")
	s.mu.Lock()
	said := s.missing == m
	s.missing = m
	s.mu.Unlock()
	if m != "" && !said {
		names := make([]string, len(listed))
		for i, t := range listed {
			names[i] = t.Name
		}
		s.log.Warn("configured tools the MCP server does not list", "missing", m, "listed", strings.Join(names, ", "))
	}
}

// forward returns the handler of the server's tool name: a tools/call on the session of the
// moment.
func (s *Set) forward(name string) tools.Handler {
	return func(ctx context.Context, input json.RawMessage) (any, error) {
		cs := s.current()
		if cs == nil {
			return nil, fmt.Errorf("MCP server %s is not connected (it is being started again)", s.opts.Name)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: input})
		var rpcErr *jsonrpc.Error
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, err // the device says it timed out, or was cancelled
		case errors.As(err, &rpcErr):
			// The server answered with a protocol error (an unknown tool, bad arguments).
			return nil, fmt.Errorf("MCP server %s: %s: %w", s.opts.Name, name, err)
		case err != nil:
			// No answer: the program died (EOF) or the connection broke.
			return nil, fmt.Errorf("MCP server %s: %s: the server went away during the call (it is started again): %w", s.opts.Name, name, err)
		case res.IsError:
			msg := cut(contentText(res.Content), maxErrorText)
			if msg == "" {
				msg = "failed, and said nothing more"
			}
			return nil, fmt.Errorf("%s: %s", name, msg)
		}
		return result(res), nil
	}
}

// result is what the device answers for res: its structured content as it is, text content as
// one string, anything else (images, resources) as the content list.
func result(res *mcp.CallToolResult) any {
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	if len(res.Content) > 0 && !slices.ContainsFunc(res.Content, func(c mcp.Content) bool {
		_, text := c.(*mcp.TextContent)
		return !text
	}) {
		return contentText(res.Content)
	}
	if res.Content == nil {
		return []mcp.Content{}
	}
	return res.Content
}

// contentText joins the text items of c, one per line.
func contentText(c []mcp.Content) string {
	var parts []string
	for _, it := range c {
		if t, ok := it.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// cut shortens s to n bytes at a character boundary, with "…" at the end when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
