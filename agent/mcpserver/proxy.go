package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/bearer"
)

// ProxyOptions say which MCP server Proxy serves over stdio. Proxy copies them.
type ProxyOptions struct {
	// URL is serve's address, http://HOST:PORT (then /mcp is its MCP endpoint), or the endpoint
	// itself.
	URL string
	// Token, when set, is sent as "Authorization: Bearer TOKEN" (agent.token_file on serve).
	Token string
	// HTTPClient makes the requests; nil is a client of its own.
	HTTPClient *http.Client
	Version    string // the proxy's version, as a client and as a server
	Logger     *slog.Logger
}

// ErrUpstreamGone is the end of a Proxy whose HTTP server ended the session (serve stopped or
// restarted): the host launches the command again.
var ErrUpstreamGone = errors.New("mcpserver: the MCP server ended the session")

// Proxy serves, on t (an MCP host's stdio), the tools of the MCP server at o.URL: it connects as
// a client, lists them as its own, forwards tools/call, and follows the server's
// notifications/tools/list_changed, sending its own. It returns nil when the host ends the
// session (closes stdin) or ctx is cancelled, an error wrapping ErrUpstreamGone when the server
// ends it, and an error naming the URL when it cannot connect.
func Proxy(ctx context.Context, t mcp.Transport, o *ProxyOptions) error {
	opts := *o
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	endpoint, err := endpointURL(opts.URL)
	if err != nil {
		return err
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	if opts.Token != "" {
		c := *hc
		c.Transport = bearer.For(endpoint, opts.Token, hc.Transport)
		hc = &c
	}

	p := &proxy{log: opts.Logger.With("component", "mcp-proxy"), listed: map[string]bool{}, changed: make(chan struct{}, 1)}
	client := mcp.NewClient(&mcp.Implementation{Name: "devicectl-mcp", Version: opts.Version}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, // no roots, sampling or elicitation to offer
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select { // one pending re-list covers any number of notifications
			case p.changed <- struct{}{}:
			default:
			}
		},
	})
	// Two retries of a lost event stream ride out a blip; serve restarted has forgotten the session
	// anyway, so waiting longer (the SDK's five retries take 15 s or more) only delays the exit
	// that lets the host start over.
	p.up, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: 2}, nil)
	if err != nil {
		return fmt.Errorf("connecting to the MCP server at %s: %w", endpoint, err)
	}

	init := p.up.InitializeResult()
	p.local = mcp.NewServer(&mcp.Implementation{Name: "devicectl", Title: "devicectl agent server", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: init.Instructions,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	if err := p.mirror(ctx); err != nil {
		return errors.Join(fmt.Errorf("listing the tools of %s: %w", endpoint, err), p.up.Close())
	}
	down, err := p.local.Connect(ctx, t, nil)
	if err != nil {
		return errors.Join(fmt.Errorf("serving MCP on stdio: %w", err), p.up.Close())
	}

	// Three things run until one ends: the host's session, the server's, and the re-listing.
	// Whichever ends first, the sessions are closed, which ends the other two.
	ctx, cancel := context.WithCancel(ctx)
	hostDone, upDone := make(chan error, 1), make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { hostDone <- down.Wait() })
	wg.Go(func() { upDone <- p.up.Wait() })
	wg.Go(func() { p.follow(ctx) })
	defer func() {
		cancel()
		down.Close()
		p.up.Close()
		wg.Wait()
	}()

	select {
	case <-hostDone:
		return nil
	case <-ctx.Done():
		return nil
	case err := <-upDone:
		return fmt.Errorf("%w (%s): %v", ErrUpstreamGone, endpoint, err)
	}
}

// proxy is one Proxy's state.
type proxy struct {
	log     *slog.Logger
	up      *mcp.ClientSession // to the HTTP server
	local   *mcp.Server        // what the host sees
	changed chan struct{}      // the server said its tools changed

	mu     sync.Mutex // mirror runs from Proxy, then only from follow; mu guards listed for both
	listed map[string]bool
}

// follow re-lists the server's tools each time it says they changed, until ctx ends.
func (p *proxy) follow(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.changed:
			if err := p.mirror(ctx); err != nil && ctx.Err() == nil {
				p.log.Warn("re-listing the MCP server's tools", "err", err)
			}
		}
	}
}

// mirror makes the local server's tools those the server lists now. A tool the SDK could not
// serve (no object input schema) is left out and logged.
func (p *proxy) mirror(ctx context.Context) error {
	want := map[string]*mcp.Tool{}
	for tool, err := range p.up.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		if s, ok := tool.InputSchema.(map[string]any); !ok || s["type"] != "object" {
			p.log.Warn("left out a tool without an object input schema", "tool", tool.Name)
			continue
		}
		want[tool.Name] = tool
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var remove []string
	for n := range p.listed {
		if want[n] == nil {
			remove = append(remove, n)
			delete(p.listed, n)
		}
	}
	if len(remove) > 0 {
		p.local.RemoveTools(remove...)
	}
	for n, tool := range want {
		// Added again even when listed: AddTool replaces, and a changed schema must reach the host.
		p.local.AddTool(tool, p.forward)
		p.listed[n] = true
	}
	return nil
}

// forward runs a tools/call on the server: its result as it is, its JSON-RPC error as the same
// error.
func (p *proxy) forward(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args any
	if len(req.Params.Arguments) > 0 {
		args = json.RawMessage(req.Params.Arguments)
	}
	res, err := p.up.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: args})
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return nil, we
		}
		return nil, fmt.Errorf("calling %s on the MCP server: %w", req.Params.Name, err)
	}
	return res, nil
}

// endpointURL is the MCP endpoint of raw: http://HOST:PORT and http://HOST:PORT/ mean /mcp.
func endpointURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("the server URL %q: want http://HOST:PORT (serve's address) or its MCP endpoint http://HOST:PORT/mcp", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/mcp"
	}
	return strings.TrimSuffix(u.String(), "?"), nil
}
