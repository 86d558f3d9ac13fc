package mcpset_test

// The MCP servers the tests start: this test binary again, as a real program over stdio, in the
// mode MCPSET_TEST_SERVER names.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const serverEnv = "MCPSET_TEST_SERVER"

// serve runs the server mode names and reports whether it was one.
func serve(mode string) bool {
	switch mode {
	case "lamp":
		serveLamp()
	case "silent":
		serveSilent()
	case "flood":
		serveFlood()
	case "sleep":
		time.Sleep(time.Hour)
	default:
		return false
	}
	return true
}

// serveLamp is a Go SDK server with tools of every kind the device meets.
func serveLamp() {
	s := mcp.NewServer(&mcp.Implementation{Name: "lamp", Version: "1.0.0"}, nil)
	type echoIn struct {
		Text string `json:"text" jsonschema:"what to say back"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Say the text back."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "lamp says " + in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "power", Description: "Read the power draw."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, map[string]int, error) {
		return nil, map[string]int{"watts": 60}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fail as a tool does."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the bulb is broken"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Die in the middle of the call."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "lamp: crashing on purpose")
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Add the tool late."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "A tool added later."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late but here"}}}, nil, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grown"}}}, nil, nil
	})
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	s.AddTool(&mcp.Tool{Name: "dim.level", Description: "A name the device cannot carry.", InputSchema: map[string]any{"type": "object"}}, noop)
	s.AddTool(&mcp.Tool{Name: "remote", Description: "A schema the device cannot carry.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "https://example.com/x.json"}},
	}}, noop)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "lamp:", err)
		os.Exit(1)
	}
}

// serveSilent starts a child of its own (as a server's helper would be), writes both pids to
// MCPSET_PIDS, reads what it is sent and never answers, not even once stdin is closed: only
// killing its process group ends it.
func serveSilent() {
	argv := self()
	child := exec.Command(argv[0], argv[1:]...)
	child.Env = append(os.Environ(), serverEnv+"=sleep")
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "silent:", err)
		os.Exit(1)
	}
	pids := fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)
	if err := os.WriteFile(os.Getenv("MCPSET_PIDS"), []byte(pids), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "silent:", err)
		os.Exit(1)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	time.Sleep(time.Hour)
}

// floodCount is how many notifications/tools/list_changed serveFlood sends at once.
const floodCount = 20000

// serveFlood speaks MCP by hand, to do what no SDK server does: right after initialization it
// sends floodCount notifications/tools/list_changed back to back. Its tool "lists" says how many
// tools/list requests it has had.
func serveFlood() {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		out.Write(append(b, '\n'))
		out.Flush()
	}
	lists := 0
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil {
			continue
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}) }
		switch req.Method {
		case "initialize":
			reply(map[string]any{
				"protocolVersion": req.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo":      map[string]any{"name": "flood", "version": "1"},
			})
		case "notifications/initialized":
			for range floodCount {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
			}
		case "tools/list":
			lists++
			reply(map[string]any{"tools": []any{map[string]any{
				"name": "lists", "description": "How many tools/list requests came.", "inputSchema": map[string]any{"type": "object"},
			}}})
		case "tools/call":
			reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": strconv.Itoa(lists)}}})
		default:
			if len(req.ID) > 0 {
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			}
		}
	}
}
