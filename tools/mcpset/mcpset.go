package mcpset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/devicectl/devicectl/internal/sleep"
	"github.com/devicectl/devicectl/tools"
)

// Defaults of Options.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultInitTimeout = 10 * time.Second
	DefaultRelistEvery = time.Second
)

// InheritedEnv are the variables of devicectl's environment a stdio server gets, as the MCP
// SDKs' own clients do: what programs need to run, and nothing secret.
var InheritedEnv = []string{"HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"}

// keepAlive is how often a session's server is pinged.
const keepAlive = 30 * time.Second

// stableAfter is how long a session must have lasted for the next failure to start the back-off
// from its beginning again: a server that dies right after each start keeps backing off.
const stableAfter = 10 * time.Second

// Options configure a Set. Exactly one of Command and URL is set.
type Options struct {
	// Name names the set in logs and errors, e.g. "toolsets.mcp[1] everything".
	Name string
	// Command is a stdio server's argv; its program is looked up in PATH now. It runs without a
	// shell, in a process group of its own.
	Command []string
	// Env is added to the program's environment, which otherwise holds only devicectl's
	// InheritedEnv variables: the rest (a token in the environment) is none of its business.
	Env []string
	// URL is a Streamable HTTP server's endpoint, e.g. http://127.0.0.1:3001/mcp.
	URL string
	// BearerToken is sent to URL as Authorization: Bearer.
	BearerToken string
	// HTTPClient carries the requests to URL; nil: a client of its own.
	HTTPClient *http.Client
	// Include lists the tools to declare, by the server's names; empty: all.
	Include []string
	// SubTypes gives a tool's sub_type by the server's name; the others are query.
	SubTypes map[string]tools.SubType
	// Prefix goes before each tool's name.
	Prefix string
	// Timeout bounds one call (the device enforces it); 0: DefaultTimeout.
	Timeout time.Duration
	// InitTimeout bounds starting the server, initialize and the first tools/list; 0:
	// DefaultInitTimeout.
	InitTimeout time.Duration
	// RelistEvery is the least time between two tools/list that list_changed notifications
	// cause; 0: DefaultRelistEvery.
	RelistEvery time.Duration
	// Retry is the wait before starting again after the nth failure in a row (n from 0); nil:
	// from 1 s doubling to 30 s, jittered.
	Retry func(n int) time.Duration
	// Version goes in the client's implementation info, e.g. "1.4.0".
	Version string
	// Logger receives the set's warnings; nil discards.
	Logger *slog.Logger
}

// Set is one MCP server as a device tool set. Its tools (from Run's update, or Load) forward
// their calls to the server's session of the moment.
type Set struct {
	opts Options
	path string // Command[0] looked up
	log  *slog.Logger

	mu      sync.Mutex
	session *mcp.ClientSession // nil while not connected
	warned  map[string]string  // tool -> why the last list left it out: say it once
	missing string             // Include entries the server did not list, last said
}

// New checks opts and returns a Set; nothing is started until Run or Load.
func New(opts *Options) (*Set, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Command = slices.Clone(o.Command)
	o.Include = slices.Clone(o.Include)
	o.Env = slices.Clone(o.Env)
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.InitTimeout == 0 {
		o.InitTimeout = DefaultInitTimeout
	}
	if o.RelistEvery == 0 {
		o.RelistEvery = DefaultRelistEvery
	}
	if o.Retry == nil {
		o.Retry = defaultRetry
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{opts: o, log: o.Logger.With("component", "mcpset", "toolset", o.Name), warned: map[string]string{}}
	switch {
	case len(o.Command) > 0 && o.URL != "":
		return nil, errors.New("mcpset: set Command or URL, not both")
	case len(o.Command) > 0:
		if o.Command[0] == "" {
			return nil, errors.New("mcpset: command: empty program name")
		}
		path, err := exec.LookPath(o.Command[0])
		if err != nil {
			return nil, fmt.Errorf("mcpset: command: program %q: %w", o.Command[0], err)
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		s.path = path
	case o.URL != "":
		if s.opts.HTTPClient == nil {
			s.opts.HTTPClient = &http.Client{}
		}
	default:
		return nil, errors.New("mcpset: neither Command nor URL is set")
	}
	return s, nil
}

func (s *Set) String() string { return s.opts.Name }

// defaultRetry waits 1 s, 2 s, 4 s ... up to 30 s, each time between half and all of it, so that
// devices that lost the same server do not come back in step.
func defaultRetry(n int) time.Duration {
	d := 30 * time.Second
	if n < 5 {
		d = time.Second << n
	}
	return d/2 + rand.N(d/2+1)
}

// Run keeps a session with the server until ctx ends, handing update the tools the device
// should declare: the server's after each (re)listing that changed them, nil when the session
// broke (not when ctx ended). Update is called from Run's goroutine only. A failure to start, initialize or list is
// logged and retried after Options.Retry.
func (s *Set) Run(ctx context.Context, update func([]*tools.Tool)) {
	failures := 0
	for {
		start := time.Now()
		listed, err := s.serve(ctx, update)
		if ctx.Err() != nil {
			return // closing: the tools go with the set
		}
		if listed {
			update(nil)
		}
		if time.Since(start) >= stableAfter {
			failures = 0
		}
		switch {
		case listed:
			s.log.Warn("MCP server gone; its tools are left out until it is back", "err", err)
		case failures == 0:
			s.log.Warn("MCP server not available; retrying in the background", "err", err)
		default:
			s.log.Debug("MCP server still not available", "err", err, "failures", failures+1)
		}
		wait := s.opts.Retry(failures)
		failures++
		if sleep.For(ctx, wait) != nil {
			return
		}
	}
}

// Load connects once, lists the tools and closes: for a command that only shows them. The tools'
// handlers fail, as no session stays up.
func (s *Set) Load(ctx context.Context) ([]*tools.Tool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got []*tools.Tool
	listed, err := s.serve(ctx, func(t []*tools.Tool) {
		got = t
		cancel() // listed: end the session
	})
	if !listed {
		return nil, err
	}
	return got, nil
}

// serve runs one session: connect, list, then list again on every list_changed until the
// session ends or ctx does. listed says whether update was handed tools.
func (s *Set) serve(ctx context.Context, update func([]*tools.Tool)) (listed bool, err error) {
	changed := make(chan struct{}, 1) // one pending relist covers any number of notifications
	client := mcp.NewClient(&mcp.Implementation{Name: "devicectl", Version: s.opts.Version}, &mcp.ClientOptions{
		Logger: s.log,
		// A server that hangs, or an HTTP one gone without a word, stops answering pings: the
		// session then ends and the set is started again, instead of waiting for ever.
		KeepAlive: keepAlive,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})

	initCtx, cancelInit := context.WithTimeout(ctx, s.opts.InitTimeout)
	defer cancelInit()
	conn, err := s.connect(initCtx)
	if err != nil {
		return false, err
	}
	defer conn.stop()
	cs, err := client.Connect(initCtx, conn.transport, nil)
	if err != nil {
		return false, conn.explain("initialize", initCtx, err)
	}
	ended := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(ended)
		_ = cs.Wait()
	})
	defer func() {
		s.setSession(nil)
		_ = cs.Close()
		wg.Wait()
	}()

	ts, err := s.list(initCtx, cs)
	if err != nil {
		return false, conn.explain("tools/list", initCtx, err)
	}
	cancelInit()
	s.setSession(cs)
	update(ts)
	s.log.Info("MCP server connected", "tools", len(ts), "server", serverName(cs))
	last := ts
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-ended:
			return true, conn.explain("session", ctx, errors.New("the server closed the session"))
		case <-changed:
		}
		lctx, cancel := context.WithTimeout(ctx, s.opts.InitTimeout)
		ts, err := s.list(lctx, cs)
		cancel()
		if err != nil {
			return true, conn.explain("tools/list after list_changed", ctx, err)
		}
		if !sameDeclarations(last, ts) {
			s.log.Info("MCP server's tools changed", "tools", len(ts))
			update(ts)
			last = ts
		}
		// A flood of list_changed costs one list per RelistEvery, no more.
		t := time.NewTimer(s.opts.RelistEvery)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		case <-ended:
			t.Stop()
		}
	}
}

func (s *Set) setSession(cs *mcp.ClientSession) {
	s.mu.Lock()
	s.session = cs
	s.mu.Unlock()
}

func (s *Set) current() *mcp.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}

func serverName(cs *mcp.ClientSession) string {
	if r := cs.InitializeResult(); r != nil && r.ServerInfo != nil {
		return strings.TrimSpace(r.ServerInfo.Name + " " + r.ServerInfo.Version)
	}
	return ""
}

func sameDeclarations(a, b []*tools.Tool) bool {
	return slices.EqualFunc(a, b, func(x, y *tools.Tool) bool { return reflect.DeepEqual(x.Declaration, y.Declaration) })
}
