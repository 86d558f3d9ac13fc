package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/devicectl/devicectl/device"
	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/opentool"
	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// openToolServer serves the device's tools to OpenTool clients on opentool.listen. A reload that
// keeps the address swaps only the handler (new keys, say), so clients see no gap; a new address
// gets a new listener, opened before the old one is closed, so a bad one refuses the reload.
type openToolServer struct {
	addr    string // as configured
	srv     *http.Server
	handler atomic.Pointer[http.Handler]
	done    chan struct{} // closed when Serve has returned
}

// listenOpenTool starts serving h on addr.
func listenOpenTool(addr string, h http.Handler, log *slog.Logger) (*openToolServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &config.Error{Key: "opentool.listen", Err: err}
	}
	s := &openToolServer{addr: addr, done: make(chan struct{})}
	s.handler.Store(&h)
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*s.handler.Load()).ServeHTTP(w, r) }),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("OpenTool server stopped", "err", err)
		}
	}()
	log.Info("serving the device's tools over OpenTool", "listen", ln.Addr().String())
	return s, nil
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

// openToolHandler serves the tools in force (d.cur) through the agent's own call path, so an
// OpenTool call gets the validation, limits and errors a call of the agent server gets.
func (d *Daemon) openToolHandler(keys []string) (http.Handler, error) {
	return opentoolhttp.NewHandler(&opentoolhttp.HandlerOptions{
		Version: openToolVersion(d.opts.Version),
		Load: func(context.Context) (json.RawMessage, error) {
			p := d.cur.Load()
			return deviceDocument(p.ident.mac, d.opts.Version, p.reg.Declarations(), d.log)
		},
		Call: func(ctx context.Context, name string, params json.RawMessage) (any, error) {
			res, err := d.agent.Call(ctx, name, params)
			var ce *device.CallError
			if errors.As(err, &ce) {
				rpc := &opentoolhttp.RPCError{Code: ce.Code, Message: ce.Message}
				if ce.Details != "" {
					rpc.Data = device.ErrorData{Details: ce.Details}
				}
				return nil, rpc
			}
			if err != nil {
				return nil, err
			}
			return res, nil
		},
		APIKeys: keys,
		Logger:  d.log, // the handler names its component
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

// openToolHandlerFor reads the keys c names and builds the handler that serves them.
func (d *Daemon) openToolHandlerFor(c *config.Config) (http.Handler, error) {
	keys, err := loadAPIKeys(c.OpenTool.APIKeysFile, d.log)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		d.redact.Add(k)
	}
	h, err := d.openToolHandler(keys)
	if err != nil {
		return nil, &config.Error{Key: "opentool", Err: err}
	}
	return h, nil
}

// openToolChange is a reload's change to the OpenTool server, prepared: commit puts it in force,
// undo drops it.
type openToolChange struct {
	commit, undo func()
}

// reopenOpenTool prepares the OpenTool server c asks for. The keys are read again at every
// reload, as the token is: a key file changed in place is the usual reason for one.
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
	h, err := d.openToolHandlerFor(c)
	if err != nil {
		return openToolChange{}, err
	}
	if old != nil && old.addr == c.OpenTool.Listen {
		return openToolChange{commit: func() { old.setHandler(h) }, undo: nothing}, nil
	}
	s, err := listenOpenTool(c.OpenTool.Listen, h, d.log)
	if err != nil && old != nil && errors.Is(err, syscall.EADDRINUSE) {
		// The new address overlaps the old one's (the same port on another host): free it
		// first. Whatever fails from here on serves on the old address again.
		old.close(c.Execution.DrainTimeout)
		d.ot = nil
		restore := func() {
			back, berr := listenOpenTool(old.addr, *old.handler.Load(), d.log)
			if berr != nil {
				d.log.Error("the OpenTool server could not be reopened where it was", "err", berr)
			}
			d.ot = back
		}
		if s, err = listenOpenTool(c.OpenTool.Listen, h, d.log); err != nil {
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
