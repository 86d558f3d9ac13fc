package daemon

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/opentool"
	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// openToolServer serves the device's tools to OpenTool clients on opentool.listen. A reload that
// keeps the listener's settings swaps only the handler (new keys, say) and the certificate, so
// clients see no gap; other settings get a new listener, opened before the old one is closed, so
// a bad one refuses the reload.
type openToolServer struct {
	cfg     config.OpenToolConfig // as configured
	port    string                // the port listened on
	srv     *http.Server
	handler atomic.Pointer[http.Handler]
	cert    atomic.Pointer[tls.Certificate] // nil: plain HTTP
	done    chan struct{}                   // closed when Serve has returned
}

// maxHeaderTimeout bounds the time to send a request's headers: no client needs more.
const maxHeaderTimeout = 10 * time.Second

// listenOpenTool starts serving on o.Listen, over TLS with cert when it is not nil, with the
// handler mk builds for the port it listens on (the configured one unless that is 0).
func listenOpenTool(o config.OpenToolConfig, cert *tls.Certificate, mk func(port string) (http.Handler, error), log *slog.Logger) (*openToolServer, error) {
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, &config.Error{Key: "opentool.listen", Err: err}
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	h, err := mk(port)
	if err != nil {
		ln.Close()
		return nil, err
	}
	s := &openToolServer{cfg: o, port: port, done: make(chan struct{})}
	s.handler.Store(&h)
	s.cert.Store(cert)
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*s.handler.Load()).ServeHTTP(w, r) }),
		// A client that holds a connection without finishing its request holds a slot of
		// opentool.max_connections: every phase has a deadline.
		ReadHeaderTimeout: min(o.ReadTimeout, maxHeaderTimeout),
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10, // a request has a few short headers; the default is 1 MiB
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	var served net.Listener = newLimitListener(ln, o.MaxConnections)
	scheme := "http"
	if cert != nil {
		scheme = "https"
		served = openToolTLS(served, s.cert.Load)
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(served); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("OpenTool server stopped", "err", err)
		}
	}()
	log.Info("serving the device's tools over OpenTool", "listen", ln.Addr().String(), "scheme", scheme)
	return s, nil
}

// sameListener reports whether o can be served by s without a new listener.
func (s *openToolServer) sameListener(o config.OpenToolConfig) bool {
	return s.cfg.Listen == o.Listen && (s.cfg.CertFile != "") == (o.CertFile != "") &&
		s.cfg.MaxConnections == o.MaxConnections && s.cfg.ReadTimeout == o.ReadTimeout &&
		s.cfg.WriteTimeout == o.WriteTimeout && s.cfg.IdleTimeout == o.IdleTimeout
}

// setHandler serves h from now on.
func (s *openToolServer) setHandler(h http.Handler) { s.handler.Store(&h) }

// close stops the server, letting calls in progress finish for at most grace.
func (s *openToolServer) close(grace time.Duration) {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.done
}

// limitListener accepts at most n connections at once: past that, Accept waits for one to
// close, and new connections wait in the kernel's backlog, costing the daemon nothing.
type limitListener struct {
	net.Listener
	slots     chan struct{} // one per open connection
	closed    chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

// Close also ends an Accept waiting for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	release func() // frees the slot, once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// openToolHosts are the names the server answers to on port: the listen address (on loopback,
// every loopback name) and opentool.allowed_hosts. On all addresses (0.0.0.0, [::]) any IP
// address is accepted too; anyIP says so.
func openToolHosts(o config.OpenToolConfig, port string) (hosts []string, anyIP bool) {
	host, _, _ := net.SplitHostPort(o.Listen)
	ip := net.ParseIP(host)
	switch {
	case host == "" || ip != nil && ip.IsUnspecified():
		anyIP = true
		hosts = append(hosts, net.JoinHostPort("localhost", port))
	case host == "localhost" || ip != nil && ip.IsLoopback():
		hosts = append(hosts, net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("localhost", port), net.JoinHostPort("::1", port))
		if host != "localhost" && !ip.Equal(net.IPv4(127, 0, 0, 1)) && !ip.Equal(net.IPv6loopback) {
			hosts = append(hosts, net.JoinHostPort(host, port))
		}
	default:
		hosts = append(hosts, net.JoinHostPort(host, port))
	}
	return append(hosts, o.AllowedHosts...), anyIP
}

// openToolHandler serves the tools in force (d.cur) through the agent's own call path, so an
// OpenTool call gets the validation, limits and errors a call of the agent server gets.
func (d *Daemon) openToolHandler(keys, hosts []string, anyIP bool) (http.Handler, error) {
	return opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{
		Version: openToolVersion(d.opts.Version),
		Load: func(context.Context) (json.RawMessage, error) {
			p := d.cur.Load()
			return deviceDocument(p.ident.mac, d.opts.Version, p.reg.Declarations(), d.log)
		},
		Call: func(ctx context.Context, name string, params json.RawMessage) (any, error) {
			// The JSON-RPC method is the tool: a name that is none is an unknown method, not
			// the invalid params the agent server's mcp/tool/execute gets for it.
			if _, ok := d.cur.Load().reg.Lookup(name); !ok {
				return nil, &opentoolhttp.RPCError{Code: protocol.CodeMethodNotFound, Message: "Method not found: " + name}
			}
			res, err := d.agent.Call(ctx, name, params)
			var ce *device.CallError
			if errors.As(err, &ce) {
				rpc := &opentoolhttp.RPCError{Code: ce.Code, Message: ce.Message}
				if ce.Details != "" {
					rpc.Data = protocol.ErrorData{Details: ce.Details}
				}
				return nil, rpc
			}
			if err != nil {
				return nil, err
			}
			return res, nil
		},
		APIKeys:      keys,
		AllowedHosts: hosts,
		AnyIPHost:    anyIP,
		Logger:       d.log, // the handler names its component
	})
}

var semver = regexp.MustCompile(`^v?(\d+\.\d+\.\d+)`)

// openToolVersion is the x.y.z that GET /opentool/version reports: devicectl's own version
// when it is a release, else the protocol's.
func openToolVersion(v string) string {
	if m := semver.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return opentoolhttp.DefaultVersion
}

// loadAPIKeys reads opentool.api_keys_file: one key per line; blank lines and lines starting
// with # are skipped.
func loadAPIKeys(path string, log *slog.Logger) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	text, err := config.ReadSecret("opentool.api_keys_file", path, log)
	if err != nil {
		return nil, err
	}
	var keys []string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return nil, &config.Error{Key: "opentool.api_keys_file", Err: fmt.Errorf("%s line %d: a key holds no spaces (one key per line)", path, i+1)}
		}
		keys = append(keys, line)
	}
	if len(keys) == 0 {
		return nil, &config.Error{Key: "opentool.api_keys_file", Err: fmt.Errorf("%s holds no key", path)}
	}
	return keys, nil
}

// openToolChange is a reload's change to the OpenTool server, prepared: commit puts it in force,
// undo drops it.
type openToolChange struct {
	commit, undo func()
}

// reopenOpenTool prepares the OpenTool server c asks for. The keys and the certificate are read
// again at every reload, as the token is: a file changed in place is the usual reason for one.
func (d *Daemon) reopenOpenTool(c *config.Config) (openToolChange, error) {
	nothing := func() {}
	old := d.ot
	if c.OpenTool.Listen == "" {
		return openToolChange{commit: func() {
			d.ot = nil
			if old != nil {
				d.wg.Go(func() { old.close(c.Execution.DrainTimeout) })
			}
		}, undo: nothing}, nil
	}
	keys, err := loadAPIKeys(c.OpenTool.APIKeysFile, d.log)
	if err != nil {
		return openToolChange{}, err
	}
	for _, k := range keys {
		d.redact.Add(k)
	}
	cert, err := loadOpenToolCert(c.OpenTool)
	if err != nil {
		return openToolChange{}, err
	}
	mk := func(port string) (http.Handler, error) {
		hosts, anyIP := openToolHosts(c.OpenTool, port)
		h, err := d.openToolHandler(keys, hosts, anyIP)
		if err != nil {
			return nil, &config.Error{Key: "opentool", Err: err}
		}
		return h, nil
	}
	if old != nil && old.sameListener(c.OpenTool) {
		h, err := mk(old.port)
		if err != nil {
			return openToolChange{}, err
		}
		return openToolChange{commit: func() {
			old.cfg = c.OpenTool
			old.setHandler(h)
			old.cert.Store(cert)
		}, undo: nothing}, nil
	}
	s, err := listenOpenTool(c.OpenTool, cert, mk, d.log)
	if err != nil && old != nil && errors.Is(err, syscall.EADDRINUSE) {
		// The new address overlaps the old one's (the same port on another host, or the same
		// address with other settings): free it first. Whatever fails from here on serves on
		// the old address again.
		old.close(c.Execution.DrainTimeout)
		d.ot = nil
		restore := func() {
			h := *old.handler.Load()
			back, berr := listenOpenTool(old.cfg, old.cert.Load(), func(string) (http.Handler, error) { return h, nil }, d.log)
			if berr != nil {
				d.log.Error("the OpenTool server could not be reopened where it was", "err", berr)
			}
			d.ot = back
		}
		if s, err = listenOpenTool(c.OpenTool, cert, mk, d.log); err != nil {
			restore()
			return openToolChange{}, err
		}
		return openToolChange{
			commit: func() { d.ot = s },
			undo: func() {
				s.close(0)
				restore()
			},
		}, nil
	}
	if err != nil {
		return openToolChange{}, err
	}
	return openToolChange{
		commit: func() {
			d.ot = s
			if old != nil {
				d.wg.Go(func() { old.close(c.Execution.DrainTimeout) })
			}
		},
		undo: func() { s.close(0) },
	}, nil
}

// deviceDocument is the OpenTool document of the device's tools, for GET /opentool/load. A tool
// OpenTool cannot express is left out of the document (it can still be called) and logged.
func deviceDocument(mac, version string, decls []tools.Declaration, log *slog.Logger) (json.RawMessage, error) {
	doc, err := opentool.NewDocument(opentool.Info{
		Title:       "devicectl " + mac,
		Description: "The tools of the device " + mac + ", served by devicectl.",
		Version:     version,
	}, decls)
	if doc == nil {
		return nil, err
	}
	if err != nil {
		log.Debug("OpenTool document: tools left out", "err", err)
	}
	return json.Marshal(doc)
}
