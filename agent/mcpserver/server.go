package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/internal/bearer"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
)

// Options say what the MCP server serves. New copies them; nil fields take the defaults.
type Options struct {
	Hub *hub.Hub // the devices; required
	// Local are the server's own tools (calculate, memory, ...), listed under their own names;
	// nil: none.
	Local *tools.Registry
	// Aliases name devices in tool names, by MAC as the protocol writes it (agent.device_aliases);
	// a device without one is named by its MAC. Each alias is 1 to 32 of [A-Za-z0-9_-], with no
	// "__" and no "_" at either end.
	Aliases map[string]string
	// WaitForControl makes a control tool wait for the device's answer like a query tool
	// (agent.wait_for_control); false answers {"status":"success"} at once, as seed 002 says.
	WaitForControl bool
	// CallTimeout bounds one device call, waited for or not; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxSessions bounds the open MCP sessions (agent.limits.mcp_sessions): a new one past it
	// closes the session unused longest. 0 is DefaultMaxSessions.
	MaxSessions int
	// SessionIdle closes a session that sent no request for this long
	// (agent.limits.mcp_session_idle); a host that comes back after it gets 404 and starts a new
	// session, as the Streamable HTTP transport says. 0 is DefaultSessionIdle.
	SessionIdle time.Duration
	// Token, when set, is the bearer token Handler requires (agent.token_file).
	Token   string
	Version string // the server's version in initialize's serverInfo
	Logger  *slog.Logger
}

// DefaultCallTimeout is Options.CallTimeout's default: a device answers or times out its own
// call well within it (execution.tool_timeout is 10 s).
const DefaultCallTimeout = time.Minute

// goneKept is how many disconnected devices the server remembers, to tell a caller of their tools
// why they are gone.
const goneKept = 256

// Server is an MCP server whose tools are the hub's devices' and the local ones. Make it with
// New; serve it with Handler (Streamable HTTP) or through MCP; Close it.
type Server struct {
	opts Options
	log  *slog.Logger
	mcp  *mcp.Server
	http http.Handler

	ctx         context.Context // the server's life: the follow loop, control calls not waited for
	cancel      context.CancelFunc
	unsubscribe func()
	wg          sync.WaitGroup // the follow loop and the control calls not waited for
	closeOnce   sync.Once

	mu     sync.Mutex
	closed bool
	later  int // control calls running that nobody waits for, at most maxLater
	// announces is whether Local has reminders.ToolAnnounce, so that each device gets
	// DEVICE__announce.
	announces bool
	listed    map[string]deviceTool // MCP tool name -> the device's tool, as listed now
	gone      map[string]goneDevice // device name -> why its tools went
}

// deviceTool is one device's tool as the MCP server lists it.
type deviceTool struct {
	mac    string
	device string // its name in tool names: the alias, else the MAC
	decl   tools.Declaration
	// announce marks the server's DEVICE__announce, which the local announce tool runs for the
	// device, rather than one the device declared.
	announce bool
}

// announceDecl is DEVICE__announce as listed: one value, so that sync sees it unchanged. When
// Options.Local has reminders.ToolAnnounce, the local tool that makes a device speak first, every
// device gets DEVICE__announce {text}, which calls it with the device's MAC.
var announceDecl = tools.Declaration{
	Name: reminders.ToolAnnounce,
	Description: "Make this device say something now, without being asked: it shows and speaks text as it is, " +
		"outside any conversation. Returns the device that said it.",
	MainType: tools.Local,
	SubType:  tools.Control,
	Parameters: &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{"text": {Type: "string", Description: "what the device says"}},
		Required:             []string{"text"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	},
}

// name is the tool's MCP name.
func (t deviceTool) name() string { return ToolName(t.device, t.decl.Name) }

// Sep joins a device's name and its tool's in an MCP tool name: DEVICE__TOOL. The names of
// functions hosts hand to OpenAI's and Anthropic's models must match ^[a-zA-Z0-9_-]{1,64}$,
// which refuses a dot.
const Sep = "__"

// maxToolName is the longest tool name those hosts accept.
const maxToolName = 64

// ToolName is the MCP name of a device's tool: device, Sep, tool. A name over 64 bytes keeps
// its device part and the start of the tool's name, and ends with "-" and 8 hex digits of the
// tool name's SHA-256, so that it stays the same from one listing to the next and distinct from
// the device's other tools. device holds no "__" and does not end with "_" (validDeviceName),
// so the first "__" of a name ends it.
func ToolName(device, tool string) string {
	name := device + Sep + tool
	if len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(tool))
	suffix := "-" + hex.EncodeToString(sum[:4])
	return name[:maxToolName-len(suffix)] + suffix
}

// goneDevice is a device whose registration ended.
type goneDevice struct {
	mac    string
	at     time.Time
	reason error // nil when the hub said nothing
}

// New builds the MCP server over o.Hub and starts following the hub's devices; Close stops it.
func New(o *Options) (*Server, error) {
	if o == nil || o.Hub == nil {
		return nil, errors.New("mcpserver: Options.Hub is nil")
	}
	opts := *o
	opts.Aliases = make(map[string]string, len(o.Aliases))
	owner := map[string]string{} // alias -> MAC
	for _, mac := range slices.Sorted(maps.Keys(o.Aliases)) {
		a := o.Aliases[mac]
		norm, err := protocol.ParseMAC(mac)
		if err != nil {
			return nil, fmt.Errorf("mcpserver: the alias %q is for %q: %w", a, mac, err)
		}
		if !validDeviceName(a) {
			return nil, fmt.Errorf("mcpserver: the alias %q of %s is not 1 to 32 of A-Z a-z 0-9 _ - with no \"__\" and no \"_\" at either end (it starts tool names: ALIAS__TOOL)", a, norm)
		}
		if other, dup := owner[a]; dup {
			return nil, fmt.Errorf("mcpserver: the alias %q names both %s and %s", a, other, norm)
		}
		owner[a] = norm
		opts.Aliases[norm] = a
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		opts:   opts,
		log:    opts.Logger.With("component", "mcp"),
		listed: map[string]deviceTool{},
		gone:   map[string]goneDevice{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	control := controlNotWaited
	if opts.WaitForControl {
		control = controlWaited
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "devicectl", Title: "devicectl agent server", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions + " " + control,
		// No logging capability (the SDK's default): the server sends no logs to hosts. Tools
		// are announced even before a device registers, and change as devices come and go.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	s.mcp.AddReceivingMiddleware(s.goneDevices)
	if opts.Local != nil {
		_, s.announces = opts.Local.Lookup(reminders.ToolAnnounce)
		for _, t := range opts.Local.Tools() {
			if err := s.addLocal(t.Declaration); err != nil {
				s.cancel()
				return nil, err
			}
		}
	}

	// Subscribed before the first sync, so no registration falls between the two.
	events, unsubscribe := opts.Hub.Subscribe(0)
	s.unsubscribe = unsubscribe
	s.sync(nil)
	s.wg.Go(func() { s.follow(events) })

	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:         s.log,
		SessionTimeout: opts.SessionIdle,
	})
	s.http = s.authorize(s.refuseClosed(parseErrors(newSessions(s, opts.MaxSessions).limit(streamable))))
	return s, nil
}

// instructions tell a host's model what the tools are; one of the control sentences follows.
const (
	instructions     = `The tools of the devices (robots, speakers, desk companions) registered with this devicectl agent server, named DEVICE__TOOL (DEVICE is a short alias or the device's MAC; the Title says "TOOL on DEVICE"), and the server's own tools (calculate, search_web, memory, ...). DEVICE__announce makes that device say a text now. The list changes as devices connect and disconnect.`
	controlNotWaited = `A device's control tool (one that changes the device) answers {"status":"success"} once sent, without waiting for the device; its query tools answer with the device's result.`
	controlWaited    = `A device's tools answer with the device's result.`
)

// MCP returns the SDK server, to serve it over another transport (mcp.Server.Run).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Handler serves the Streamable HTTP transport: mount it at /mcp. With Options.Token set, a
// request without "Authorization: Bearer TOKEN" is refused with 401.
func (s *Server) Handler() http.Handler { return s.http }

// Close stops following the hub, ends the MCP sessions (their event streams included, so an HTTP
// server's Shutdown need not wait for them) and waits for the control calls still running, which
// it cancels.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.unsubscribe()
		s.cancel()
		for ss := range s.mcp.Sessions() {
			ss.Close()
		}
		s.wg.Wait()
		// A request that passed refuseClosed just before closed was set may have opened a
		// session since: its event stream would hold the HTTP server's shutdown up.
		for ss := range s.mcp.Sessions() {
			ss.Close()
		}
	})
	return nil
}

// follow keeps the device tools in step with the hub until the subscription ends. The events
// already queued are taken together, so a burst of registrations (a swarm reconnecting) costs one
// sync, not one per device.
func (s *Server) follow(events <-chan hub.Event) {
	for ev := range events {
		reasons := map[string]error{} // why each device in the batch disconnected
		relevant := note(reasons, ev)
	batch:
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					break batch
				}
				relevant = note(reasons, ev) || relevant
			default:
				break batch
			}
		}
		if relevant {
			s.sync(reasons)
		}
	}
}

// note records a Disconnected event's reason and reports whether ev can change the tools.
func note(reasons map[string]error, ev hub.Event) bool {
	switch ev.Kind {
	case hub.Disconnected:
		reasons[ev.Device.MAC] = ev.Reason
		return true
	case hub.Registered, hub.ToolsChanged:
		return true
	}
	return false
}

// sync makes the listed device tools those of the devices registered now. Events only say when
// to look: the hub's Devices is what counts, so a dropped or late event costs nothing but time.
// reasons say why devices that went, went (by MAC).
func (s *Server) sync(reasons map[string]error) {
	want := map[string]deviceTool{}
	present := map[string]bool{} // device names registered now
	for _, d := range s.opts.Hub.Devices() {
		name := s.deviceName(d.MAC)
		present[name] = true
		for _, decl := range slices.SortedFunc(slices.Values(d.Tools), func(a, b tools.Declaration) int { return strings.Compare(a.Name, b.Name) }) {
			n := ToolName(name, decl.Name)
			if other, dup := want[n]; dup { // two long names cut to one: the first in order wins
				s.log.Warn("a device's tool is not listed: its shortened MCP name is another's", "mac", d.MAC, "tool", decl.Name, "name", n, "other", other.decl.Name)
				continue
			}
			want[n] = deviceTool{mac: d.MAC, device: name, decl: decl}
		}
		// A device that declares an announce tool of its own keeps it under the name.
		if n := ToolName(name, reminders.ToolAnnounce); s.announces && want[n].decl.Name == "" {
			want[n] = deviceTool{mac: d.MAC, device: name, decl: announceDecl, announce: true}
		}
	}

	s.mu.Lock()
	var remove []string
	var add []deviceTool
	for n, cur := range s.listed {
		if w, ok := want[n]; !ok {
			remove = append(remove, n)
			if !present[cur.device] {
				s.forget(cur, reasons[cur.mac])
			}
		} else if !sameTool(cur.decl, w.decl) {
			add = append(add, w)
		}
	}
	for n, w := range want {
		if _, ok := s.listed[n]; !ok {
			add = append(add, w)
		}
		delete(s.gone, w.device)
	}
	s.listed = want
	s.mu.Unlock()

	// The SDK debounces: the changes of one sync make one notifications/tools/list_changed.
	if len(remove) > 0 {
		s.mcp.RemoveTools(remove...)
	}
	for _, t := range add {
		s.addDevice(t)
	}
	if len(remove)+len(add) > 0 {
		s.log.Debug("device tools changed", "added", len(add), "removed", len(remove))
	}
}

// forget remembers that the device of t went, and why when the hub said; s.mu is held.
func (s *Server) forget(t deviceTool, reason error) {
	if _, ok := s.gone[t.device]; ok {
		return
	}
	if len(s.gone) >= goneKept { // the longest gone makes room
		oldest := ""
		for n, o := range s.gone {
			if oldest == "" || o.at.Before(s.gone[oldest].at) {
				oldest = n
			}
		}
		delete(s.gone, oldest)
	}
	s.gone[t.device] = goneDevice{mac: t.mac, at: time.Now(), reason: reason}
}

// sameTool reports whether a re-registration left a tool as it was. The hub shares one schema
// between registrations with the same tools, so a pointer comparison finds a changed schema.
func sameTool(a, b tools.Declaration) bool {
	return a.Description == b.Description && a.SubType == b.SubType && a.MainType == b.MainType && a.Parameters == b.Parameters
}

// deviceName is how tool names name the device with that MAC: its alias, else the MAC.
func (s *Server) deviceName(mac string) string {
	if a, ok := s.opts.Aliases[mac]; ok {
		return a
	}
	return mac
}

// validDeviceName reports whether a fits before the "__" of an MCP tool name: 1 to 32 of
// [A-Za-z0-9_-], with no "__" and no "_" at either end (as agent.device_aliases checks), so that
// the first "__" of a tool name ends the device's name.
func validDeviceName(a string) bool {
	if a == "" || len(a) > 32 || strings.Contains(a, Sep) || strings.HasPrefix(a, "_") || strings.HasSuffix(a, "_") {
		return false
	}
	for _, r := range a {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// validLocalName reports whether a local tool's name fits the hosts' pattern and cannot be taken
// for a device's tool.
func validLocalName(n string) bool {
	return protocol.ValidToolName(n) && !strings.Contains(n, Sep)
}

// addDevice lists a device's tool.
func (s *Server) addDevice(t deviceTool) {
	if t.announce {
		s.mcp.AddTool(&mcp.Tool{
			Name:        t.name(),
			Title:       reminders.ToolAnnounce + " on " + t.device,
			Description: t.decl.Description,
			InputSchema: t.decl.Parameters,
			Meta:        mcp.Meta{"devicectl/mac": t.mac, "devicectl/tool": reminders.ToolAnnounce, "devicectl/server": true},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.callAnnounce(ctx, t, req.Params.Arguments)
		})
		return
	}
	s.mcp.AddTool(&mcp.Tool{
		Name:        t.name(),
		Title:       t.decl.Name + " on " + t.device,
		Description: t.decl.Description,
		InputSchema: t.decl.Parameters, // type object: the hub refuses a registration without it
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t.decl.SubType == tools.Query},
		Meta:        mcp.Meta{"devicectl/mac": t.mac, "devicectl/tool": t.decl.Name, "devicectl/sub_type": string(t.decl.SubType)},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.callDevice(ctx, t, req.Params.Arguments)
	})
}

// addLocal lists one of the server's own tools under its own name.
func (s *Server) addLocal(d tools.Declaration) error {
	if !validLocalName(d.Name) || d.Parameters == nil || d.Parameters.Type != "object" {
		return fmt.Errorf("mcpserver: local tool %q: an MCP tool needs a name of 1 to 64 of A-Z a-z 0-9 _ - without \"__\" (which device tools hold) and an object schema", d.Name)
	}
	s.mcp.AddTool(&mcp.Tool{
		Name:        d.Name,
		Description: d.Description,
		InputSchema: d.Parameters,
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.callLocal(ctx, d.Name, req.Params.Arguments)
	})
	return nil
}

// goneDevices answers a call to a tool of a device that has disconnected (no longer listed) with
// a tool error that says so, rather than the SDK's "unknown tool".
func (s *Server) goneDevices(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				if text, gone := s.goneText(p.Name); gone {
					return toolError(text), nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

// goneText says why name, a tool of a device that is no longer registered, cannot be called.
func (s *Server) goneText(name string) (string, bool) {
	device, _, ok := strings.Cut(name, Sep)
	if !ok {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, listed := s.listed[name]; listed {
		return "", false
	}
	g, ok := s.gone[device]
	if !ok {
		return "", false
	}
	text := fmt.Sprintf("%s: the device %s disconnected %s ago (at %s)", name, describe(device, g.mac), time.Since(g.at).Round(time.Second), g.at.UTC().Format(time.RFC3339))
	if g.reason != nil {
		text += ": " + g.reason.Error()
	}
	return text + "; its tools are listed again when it reconnects", true
}

// describe names a device for people: "desk (AA-BB-CC-DD-EE-FF)", or its MAC alone.
func describe(device, mac string) string {
	if device == mac {
		return mac
	}
	return device + " (" + mac + ")"
}

// refuseClosed answers 503 once the server is closed: a session opened then would hold the HTTP
// server's shutdown with its event stream.
func (s *Server) refuseClosed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			http.Error(w, "devicectl: the agent server is shutting down", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// maxBody bounds a POST's body, as the SDK's own default does (mcp.DefaultMaxRequestBodyBytes).
const maxBody = mcp.DefaultMaxRequestBodyBytes

// parseErrors answers a POST whose body is not JSON with a JSON-RPC parse error (-32700, HTTP
// 400), where the SDK answers plain text: a client reads the error as it reads any other.
func parseErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		r.Body.Close()
		switch {
		case err != nil:
			writeRPCError(w, http.StatusBadRequest, protocol.CodeParseError, "Parse error", "reading the request body: "+err.Error())
			return
		case len(body) > maxBody:
			writeRPCError(w, http.StatusRequestEntityTooLarge, protocol.CodeInvalidRequest, "Invalid Request", fmt.Sprintf("the request body is over %d bytes", maxBody))
			return
		case !json.Valid(body):
			writeRPCError(w, http.StatusBadRequest, protocol.CodeParseError, "Parse error", "the request body is not JSON")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// writeRPCError writes a JSON-RPC error answer with no id, as HTTP status.
func writeRPCError(w http.ResponseWriter, status int, code int64, message, details string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code": code, "message": message, "data": map[string]string{"details": details},
	}})
}

// authorize refuses a request without the bearer token, when one is set, as the A2A routes do.
func (s *Server) authorize(next http.Handler) http.Handler {
	if s.opts.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bearer.Matches(r, s.opts.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="devicectl"`)
			writeRPCError(w, http.StatusUnauthorized, protocol.CodeInvalidRequest, "Invalid Request", "Missing or wrong bearer token in the Authorization header (the token in agent.token_file)")
			return
		}
		next.ServeHTTP(w, r)
	})
}
