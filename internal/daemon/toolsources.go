package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/opentool"
	"github.com/devicectl/devicectl/tools/opentoolhttp"
)

// loadTimeout bounds one read of a tool set's description (an OpenTool /load, an OpenAPI URL).
const loadTimeout = 10 * time.Second

// openToolSource is an OpenTool server whose functions become device tools; their calls are
// forwarded to its /opentool/call.
type openToolSource struct {
	cfg    config.OpenToolSetConfig
	key    string // toolsets.opentool[N], for messages
	client *opentoolhttp.Client
	log    *slog.Logger

	once sync.Once // warn once about configured functions the server does not list
}

func newOpenToolSource(i int, c config.OpenToolSetConfig, version string, log *slog.Logger, redact func(string)) (*openToolSource, error) {
	key := fmt.Sprintf("toolsets.opentool[%d]", i+1)
	var apiKey string
	if c.APIKeyFile != "" {
		var err error
		if apiKey, err = config.ReadToken(key+".api_key_file", c.APIKeyFile, log); err != nil {
			return nil, err
		}
		redact(apiKey)
	}
	client, err := opentoolhttp.NewClient(c.URL, &opentoolhttp.ClientOptions{
		APIKey:     apiKey,
		HTTPClient: &http.Client{Timeout: max(c.Timeout, loadTimeout)},
		UserAgent:  "devicectl/" + version,
	})
	if err != nil {
		return nil, &config.Error{Key: key + ".url", Err: err}
	}
	return &openToolSource{cfg: c, key: key, client: client, log: log}, nil
}

func (s *openToolSource) String() string { return s.key + " " + s.cfg.URL }

func (s *openToolSource) watch() (time.Duration, time.Duration) {
	return s.cfg.Refresh, s.cfg.DropAfter
}

func (s *openToolSource) load(ctx context.Context) ([]*tools.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	raw, err := s.client.Load(ctx)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("%s: the server has no OpenTool document (GET /opentool/load answered {})", s.cfg.URL)
	}
	doc, err := opentool.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: its OpenTool document: %w", s.cfg.URL, err)
	}
	s.warnMissing(doc)
	var out []*tools.Tool
	for i := range doc.Functions {
		f := &doc.Functions[i]
		if len(s.cfg.Functions) > 0 && !slices.Contains(s.cfg.Functions, f.Name) {
			continue
		}
		sub := s.cfg.SubType
		if st, ok := s.cfg.SubTypes[f.Name]; ok {
			sub = st
		}
		decl, err := doc.Declaration(f, tools.SubType(sub))
		if err != nil {
			s.log.Warn("an OpenTool function cannot be a device tool; left out", "toolset", s.String(), "function", f.Name, "err", err)
			continue
		}
		decl.Name = s.cfg.Prefix + f.Name
		out = append(out, &tools.Tool{Declaration: decl, Timeout: s.cfg.Timeout, Handler: s.forward(f.Name)})
	}
	return out, nil
}

// forward calls the function name on the server. Its errors (unreachable, 401, the function's
// own) are the tool's failure: the agent server gets -32000 with the message.
func (s *openToolSource) forward(name string) tools.Handler {
	return func(ctx context.Context, input json.RawMessage) (any, error) {
		res, err := s.client.Call(ctx, name, input)
		var ce *opentoolhttp.ClientError
		if errors.As(err, &ce) && len(ce.Data) > 0 {
			// The server's details (which value was wrong) are what a person needs; the device's
			// own errors carry them as {"details": "..."}.
			var data struct {
				Details string `json:"details"`
			}
			// A server that already put them in its message (devicectl does, for the TypeScript
			// SDK) is not repeated.
			if json.Unmarshal(ce.Data, &data) == nil && data.Details != "" && !strings.Contains(ce.Message, data.Details) {
				return nil, fmt.Errorf("%w: %s", err, data.Details)
			}
		}
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// warnMissing says, once, which configured functions the server does not list: a typo would
// otherwise go unnoticed.
func (s *openToolSource) warnMissing(doc *opentool.Document) {
	var missing []string
	for _, name := range s.cfg.Functions {
		if doc.Function(name) == nil {
			missing = append(missing, name)
		}
	}
	for name := range s.cfg.SubTypes {
		if doc.Function(name) == nil && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return
	}
	slices.Sort(missing)
	s.once.Do(func() {
		names := make([]string, len(doc.Functions))
		for i, f := range doc.Functions {
			names[i] = f.Name
		}
		s.log.Warn("configured functions the OpenTool server does not list", "toolset", s.String(), "key", s.key,
			"missing", strings.Join(missing, ", "), "listed", strings.Join(names, ", "))
	})
}

func (s *openToolSource) close() { s.client.CloseIdleConnections() }

// startToolSets builds the tool sets c configures and keeps them current (toolSets). prev, the
// parts in force at a reload (nil at start-up), lends its tools to the OpenTool servers configured
// as before: they stay declared while the new set reads them again (a new key, say), and are
// withdrawn only if that fails for drop_after.
func (d *Daemon) startToolSets(ctx context.Context, c *config.Config, prev *parts) (*toolSets, error) {
	sources, ready, err := newToolSources(ctx, c, d.opts.Version, d.log, func(s string) {
		d.redact.Add(s)
		d.out.Add(s)
	})
	if err != nil || len(sources) == 0 {
		return nil, err
	}
	if prev != nil && prev.toolsets != nil {
		// OpenTool sources come first, in config order, in both sets.
		for i, tc := range c.ToolSets.OpenTool {
			if i < len(prev.cfg.ToolSets.OpenTool) && reflect.DeepEqual(prev.cfg.ToolSets.OpenTool[i], tc) {
				ready[i] = prev.toolsets.toolsOf(i)
			}
		}
	}
	return startToolSets(sources, ready, d.log), nil
}

// newToolSources builds the tool sets c configures. Their secrets are read now, and OpenAPI files
// loaded now (ready[i] is then not nil), so that a mistake in them refuses the start or the
// reload with the key at fault; OpenTool servers, OpenAPI URLs and MCP servers are left to load
// later.
// redact is handed every secret read.
func newToolSources(ctx context.Context, c *config.Config, version string, log *slog.Logger, redact func(string)) (sources []toolSource, ready [][]*tools.Tool, err error) {
	defer func() {
		if err != nil {
			for _, s := range sources {
				s.close()
			}
			sources, ready = nil, nil
		}
	}()
	for i, tc := range c.ToolSets.OpenTool {
		s, err := newOpenToolSource(i, tc, version, log, redact)
		if err != nil {
			return sources, ready, err
		}
		sources = append(sources, s)
		ready = append(ready, nil)
	}
	for i, ac := range c.ToolSets.OpenAPI {
		s, err := newOpenAPISource(i, ac, version, log, redact)
		if err != nil {
			return sources, ready, err
		}
		sources = append(sources, s)
		var t []*tools.Tool
		if !isHTTPURL(ac.Spec) {
			if t, err = s.load(ctx); err != nil {
				return sources, ready, &config.Error{Key: fmt.Sprintf("toolsets.openapi[%d].spec", i+1), Err: err}
			}
			if t == nil {
				t = []*tools.Tool{} // loaded, with no operations: not to be retried
			}
		}
		ready = append(ready, t)
	}
	for i, mc := range c.ToolSets.MCP {
		s, err := newMCPSource(i, mc, version, log, redact)
		if err != nil {
			return sources, ready, err
		}
		sources = append(sources, s)
		ready = append(ready, nil)
	}
	return sources, ready, nil
}

// LoadToolSets reads every tool set c configures once, for a command that shows the tools
// (devicectl tools): a server that does not answer is reported to log and left out. version is
// sent in the User-Agent.
func LoadToolSets(ctx context.Context, c *config.Config, version string, log *slog.Logger) ([]*tools.Tool, error) {
	sources, ready, err := newToolSources(ctx, c, version, log, func(string) {})
	if err != nil {
		return nil, err
	}
	var all []*tools.Tool
	for i, s := range sources {
		t := ready[i]
		if t == nil {
			if t, err = s.load(ctx); err != nil {
				log.Warn("tool set not available; its tools are left out", "toolset", s.String(), "err", err)
			}
		}
		all = append(all, t...)
		s.close()
	}
	return all, nil
}

func isHTTPURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}
