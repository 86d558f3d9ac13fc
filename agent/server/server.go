//go:build !devicectl_omit_serve || !devicectl_omit_sim

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/devicectl/devicectl/agent"
	"github.com/devicectl/devicectl/agent/a2a"
	"github.com/devicectl/devicectl/agent/cluster"
	"github.com/devicectl/devicectl/agent/httpguard"
	"github.com/devicectl/devicectl/agent/hub"
	"github.com/devicectl/devicectl/agent/localtools"
	"github.com/devicectl/devicectl/agent/mcpserver"
	"github.com/devicectl/devicectl/agent/memory"
	"github.com/devicectl/devicectl/agent/reminders"
	"github.com/devicectl/devicectl/agent/store"
	"github.com/devicectl/devicectl/agent/web"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/internal/netlimit"
	"github.com/devicectl/devicectl/tools"
)

// Options say what to build. New copies them.
type Options struct {
	Config *config.Config // the agent, llm, connection and log sections; required
	// DBPath is the agent's database, a SQLite file or a PostgreSQL URL (agent/store.Open); ""
	// is agent.store, else agent.db in agent.state_dir (config.AgentStore).
	DBPath  string
	Version string // shown in the agent card
	Logger  *slog.Logger
	// Getenv reads the environment (the state directory's fallbacks); nil is os.Getenv.
	Getenv func(string) string
}

// Server is a built agent server. Serve it with Serve, or mount Handler yourself; Close it.
type Server struct {
	Hub   *hub.Hub
	Agent *agent.Agent
	// Cluster is this node's part of a cluster of serve nodes (agent.cluster.nats); nil for a
	// single node.
	Cluster *cluster.Cluster
	// Handler serves everything on one address: a WebSocket upgrade on any path is a device line
	// for the hub; /mcp is the MCP server (agent/mcpserver); other requests go to the HTTP API.
	// All of it is behind agent/httpguard: the server's own Host names only (DNS rebinding), no
	// foreign Origin unless agent.allowed_origins lists it, JSON bodies only.
	// Serve applies agent.limits around it (internal/netlimit); mounted elsewhere, it has none.
	Handler http.Handler
	DBPath  string // the database: its file, or its PostgreSQL URL with the password masked
	// Web is the web page at / and /web/, when agent.web is on; nil otherwise.
	Web *web.Handler

	log     *slog.Logger
	api     http.Handler
	closers []func() error // what New opened, closed last first: the front door before the database

	mcp *mcpserver.Server // the devices' and the local tools as an MCP server, at /mcp
	// speaks is POST /announce and the reminders' routes (reminders.Handler).
	speaks http.Handler
	// devices is the hub's own HTTP route, POST /devices/{mac}/forget (hub.ForgetHandler).
	devices http.Handler

	srv       *http.Server
	limits    *netlimit.ListenerOptions // what Serve caps ln's connections with
	closeOnce sync.Once
	closeErr  error
}

// New builds the server c describes. It reads the secrets c names and opens the database; a
// problem with either is an error naming the key.
func New(o *Options) (_ *Server, err error) {
	opts := *o
	if opts.Config == nil {
		return nil, errors.New("server: Options.Config is nil")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	c := opts.Config
	if err := c.CheckAgent(); err != nil {
		return nil, err
	}
	s := &Server{log: opts.Logger}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.closeAll())
		}
	}()

	var deviceTokens []string
	if c.Agent.DeviceTokensFile != "" {
		if deviceTokens, err = config.ReadTokens("agent.device_tokens_file", c.Agent.DeviceTokensFile, s.log); err != nil {
			return nil, err
		}
	}
	where := opts.DBPath
	if where == "" {
		if where, err = config.AgentStore(c, opts.Getenv); err != nil {
			return nil, err
		}
	}
	db, err := store.Open(context.Background(), where)
	if err != nil {
		key := "agent.state_dir"
		if store.IsPostgres(where) {
			key = "agent.store"
		}
		return nil, &config.Error{Key: key, Err: err}
	}
	s.closers = append(s.closers, db.Close)
	s.DBPath = db.String()
	if u, err := url.Parse(where); err == nil && store.IsPostgres(where) {
		if _, ok := u.User.Password(); ok {
			s.log.Warn("agent.store holds a password, which the config file then holds too: put it in ~/.pgpass (PGPASSFILE) or PGPASSWORD instead", "store", s.DBPath)
		}
	}
	bindings, err := hub.NewSQLBindings(context.Background(), db)
	if err != nil {
		return nil, fmt.Errorf("the device bindings in %s: %w", s.DBPath, err)
	}
	engine, err := newSTT(c, s.log)
	if err != nil {
		return nil, err
	}
	var shared hub.Cluster // nil: a single node
	if c.Agent.Cluster.NATS != "" {
		if s.Cluster, err = newCluster(c, s.log); err != nil {
			return nil, err
		}
		// Closed after the hub (closers run last first), whose lines release their holds in it.
		s.closers = append(s.closers, s.Cluster.Close)
		shared = s.Cluster
	}
	s.Hub = hub.New(&hub.Options{
		Listener:       &voice{s: s, stt: engine, log: s.log.With("component", "voice")},
		MaxText:        int(c.Agent.Limits.MessageBytes),
		Tokens:         deviceTokens,
		Logger:         s.log,
		ReadLimit:      c.Connection.ReadLimit,
		PingInterval:   c.Connection.PingInterval,
		PingTimeout:    c.Connection.PingTimeout,
		MaxTools:       c.Agent.Limits.ToolsPerDevice,
		MaxSchemaBytes: c.Agent.Limits.SchemaBytes,
		Bindings:       bindings,
		Cluster:        shared,
	})
	s.closers = append(s.closers, s.Hub.Close)
	if s.Cluster != nil {
		// Before anything is served: the hub knows the other nodes' devices, and they can reach
		// this node's.
		if err := s.Cluster.Start(context.Background()); err != nil {
			return nil, &config.Error{Key: "agent.cluster.nats", Err: err}
		}
	}
	local := tools.NewRegistry()
	store, err := memory.New(context.Background(), db)
	if err != nil {
		return nil, fmt.Errorf("the memory store in %s: %w", s.DBPath, err)
	}
	if err := memory.RegisterTools(local, store); err != nil {
		return nil, err
	}
	var search localtools.Backend // nil: search_web says no backend is configured
	if u := c.Agent.Search.SearXNGURL; u != "" {
		sx, err := localtools.NewSearXNG(&localtools.SearXNGOptions{BaseURL: u})
		if err != nil {
			return nil, &config.Error{Key: "agent.search.searxng_url", Err: err}
		}
		search = sx
	}
	if err := localtools.Register(local, &localtools.Options{Search: search, Logger: s.log}); err != nil {
		return nil, err
	}
	sf, err := startSpeaksFirst(c, db, s.Hub, local, s)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() error { sf.stop(); return nil }) // before the hub and the database
	planner, err := newPlanner(c, s.log)
	if err != nil {
		return nil, err
	}
	s.Agent, err = agent.New(&agent.Options{
		Hub:            s.Hub,
		Planner:        planner,
		Local:          local,
		TurnTimeout:    c.Agent.TurnTimeout,
		WaitForControl: c.Agent.WaitForControl,
		Preface:        sf.preface,
		MaxTurns:       c.Agent.Limits.Turns,
		Logger:         s.log,
	})
	if err != nil {
		return nil, fmt.Errorf("building the agent: %w", err)
	}

	token := ""
	if c.Agent.TokenFile != "" {
		if token, err = config.ReadToken("agent.token_file", c.Agent.TokenFile, s.log); err != nil {
			return nil, err
		}
	}
	// The cards name agent.public_url, else the address each connection arrived at: the listen
	// address as bound (agent.listen may say port 0 or 0.0.0.0), never the request's Host.
	ao := &a2a.Options{Runner: s.Agent, DB: db, Token: token, URL: c.Agent.PublicURL, Version: opts.Version, Logger: s.log,
		MessageBytes: c.Agent.Limits.MessageBytes, TaskHistory: c.Agent.Limits.TaskHistory,
		TasksKeepAge: c.Agent.Tasks.KeepAge, TasksKeepCount: c.Agent.Tasks.KeepCount}
	if s.Cluster != nil {
		ao.Cluster = s.Cluster // its tasks are this node's; those of a node that is gone are failed
	}
	front, err := a2a.New(ao)
	if err != nil {
		return nil, fmt.Errorf("the A2A front door in %s: %w", s.DBPath, err)
	}
	s.closers = append(s.closers, front.Close)
	sf.setNotify(front.Notify)
	s.api = front
	s.devices = s.Hub.ForgetHandler(token)
	s.speaks = reminders.Handler(sf.tools, token)
	s.mcp, err = mcpserver.New(&mcpserver.Options{
		Hub: s.Hub, Local: local, Aliases: c.Agent.DeviceAliases, WaitForControl: c.Agent.WaitForControl,
		CallTimeout: c.Agent.TurnTimeout, Token: token, Version: opts.Version, Logger: s.log,
		MaxSessions: c.Agent.Limits.MCPSessions, SessionIdle: c.Agent.Limits.MCPSessionIdle,
	})
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.mcp.Close)
	if c.Agent.Web {
		if s.Web, err = web.New(&web.Options{Hub: s.Hub, Agent: s.Agent, Token: token, ShowThoughts: c.Render.ShowThoughts, CallBytes: c.Agent.Limits.WebCallBytes, Calls: c.Agent.Limits.WebCalls,
			Reminders: webReminders{sf, local}, Logger: s.log}); err != nil {
			return nil, &config.Error{Key: "agent.web", Err: err}
		}
		s.closers = append(s.closers, s.Web.Close)
	}
	guard, err := httpguard.New(&httpguard.Options{
		Hosts: ownHosts(c), Origins: allowedOrigins(c), Token: token,
		Strict:   func(r *http.Request) bool { return r.URL.Path == MCPPath }, // its GET opens a session's stream
		HostsKey: "agent.allowed_hosts", OriginsKey: "agent.allowed_origins", Logger: s.log,
	})
	if oe := (*httpguard.OptionError)(nil); errors.As(err, &oe) {
		return nil, &config.Error{Key: oe.Key, Err: oe.Err}
	} else if err != nil {
		return nil, err
	}
	s.Handler = guard.Handler(http.HandlerFunc(s.route))
	lim := c.Agent.Limits
	s.limits = &netlimit.ListenerOptions{Connections: lim.Connections, PerAddress: lim.ConnectionsPerAddress, Logger: s.log}
	s.srv = &http.Server{
		// Around Handler: the limits hold before any handler reads a request.
		Handler: netlimit.Handler(s.Handler, &netlimit.HandlerOptions{
			BodyTimeout: lim.BodyTimeout, WriteTimeout: lim.WriteTimeout, RequestBytes: lim.RequestBytes, Logger: s.log,
		}),
		ReadHeaderTimeout: lim.HeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		ConnState:         netlimit.ConnState, // at agent.limits.connections, idle connections make room
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	return s, nil
}

// newCluster connects to the cluster's NATS server (agent.cluster.*).
func newCluster(c *config.Config, log *slog.Logger) (*cluster.Cluster, error) {
	cc := c.Agent.Cluster
	token := ""
	if cc.TokenFile != "" {
		var err error
		if token, err = config.ReadToken("agent.cluster.token_file", cc.TokenFile, log); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterJoinTimeout)
	defer cancel()
	cl, err := cluster.New(ctx, &cluster.Options{URL: cc.NATS, Token: token, Name: cc.Name, Node: cc.Node, TTL: cc.TTL, Logger: log})
	if err != nil {
		return nil, &config.Error{Key: "agent.cluster.nats", Err: err}
	}
	return cl, nil
}

// clusterJoinTimeout bounds connecting to NATS and making the cluster's buckets at start.
const clusterJoinTimeout = 30 * time.Second

// ownHosts are the server's names beyond IP literals and localhost (httpguard): agent.listen's
// host, agent.public_url's, agent.allowed_hosts and the machine's own host name, by which LAN
// devices dial ws://HOSTNAME:PORT/.
func ownHosts(c *config.Config) []string {
	var hosts []string
	if h, _, err := net.SplitHostPort(c.Agent.Listen); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if u, err := url.Parse(c.Agent.PublicURL); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	hosts = append(hosts, c.Agent.AllowedHosts...)
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, httpguard.MachineNames(name)...)
	}
	return hosts
}

// allowedOrigins are agent.allowed_origins and agent.public_url's origin: behind a proxy that
// rewrites Host, the server's own page comes from there.
func allowedOrigins(c *config.Config) []string {
	origins := c.Agent.AllowedOrigins
	if u, err := url.Parse(c.Agent.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		origins = append(slices.Clip(origins), u.Scheme+"://"+u.Host)
	}
	return origins
}

// route sends a WebSocket upgrade, on any path, to the hub (so every device's server.url keeps
// working), /devices/ to the hub's route (forgetting a MAC's binding), /mcp to the MCP server, the
// web page's paths to it when it is on, and the rest to the HTTP API.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if httpguard.IsWebSocket(r) {
		s.Hub.ServeHTTP(w, r)
		return
	}
	if s.devices != nil && hub.Handles(r) {
		s.devices.ServeHTTP(w, r)
		return
	}
	if s.speaks != nil && reminders.Handles(r) {
		s.speaks.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == MCPPath && s.mcp != nil {
		s.mcp.Handler().ServeHTTP(w, r)
		return
	}
	if s.Web != nil && web.Handles(r) {
		s.Web.ServeHTTP(w, r)
		return
	}
	if s.api != nil {
		s.api.ServeHTTP(w, r)
		return
	}
	http.Error(w, "devicectl agent server: devices connect here with a WebSocket (ws://HOST:PORT/, any path)", http.StatusNotFound)
}

// MCPPath is where the MCP server's Streamable HTTP transport is mounted.
const MCPPath = "/mcp"

// Serve serves Handler on ln until Close (after Close, it closes ln and returns at once), with
// agent.limits' caps on connections and its timeouts (see internal/netlimit). It returns nil once
// closed.
func (s *Server) Serve(ln net.Listener) error {
	l := netlimit.NewListener(ln, s.limits)
	s.srv.RegisterOnShutdown(l.Drain) // a connection that never sends a request holds Close up 5 s
	if err := s.srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdownTimeout is how long Close lets HTTP requests in flight (a streamed task) finish once
// the devices are gone.
const shutdownTimeout = 5 * time.Second

// Close stops serving: the devices' lines first (so turns in flight end with the device gone
// rather than hang), then the web page's streams, then the HTTP requests, then the front door
// and the database.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.Hub != nil {
			errs = append(errs, s.Hub.Close())
		}
		if s.mcp != nil { // its sessions' event streams end, so Shutdown need not wait for them
			errs = append(errs, s.mcp.Close())
		}
		if s.Web != nil { // its event streams would hold the shutdown up
			errs = append(errs, s.Web.Close())
		}
		if s.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			if err := s.srv.Shutdown(ctx); err != nil {
				errs = append(errs, s.srv.Close())
			}
			cancel()
		}
		errs = append(errs, s.closeAll())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// closeAll closes what New opened, the last opened first.
func (s *Server) closeAll() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}
