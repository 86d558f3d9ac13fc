//go:build openapi

package daemon

// OpenAPI tool sets link kin-openapi, which takes the armv6 binary past its 10 MiB budget; they
// are built in with the openapi build tag (make build TAGS=openapi). See toolsources_noopenapi.go.

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/devicectl/devicectl/internal/config"
	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/openapi"
)

// openAPISource is an OpenAPI document whose operations become device tools; their calls are
// HTTP requests to the API it describes. A file is read once, at start-up or reload, and a bad
// one is a config error; a document at a URL is fetched in the background until it comes.
type openAPISource struct {
	cfg  config.OpenAPISetConfig
	key  string // toolsets.openapi[N], for messages
	opts *openapi.Options
}

// version is sent in the User-Agent, as the OpenTool sets send it.
func newOpenAPISource(i int, c config.OpenAPISetConfig, version string, log *slog.Logger, redact func(string)) (toolSource, error) {
	key := fmt.Sprintf("toolsets.openapi[%d]", i+1)
	o := &openapi.Options{
		BaseURL:         c.BaseURL,
		ServerVariables: c.ServerVariables,
		Timeout:         c.Timeout,
		Include:         c.Operations,
		UserAgent:       "devicectl/" + version,
		Logger:          log.With("toolset", key+" "+c.Spec),
	}
	if len(c.SubTypes) > 0 {
		o.SubTypes = map[string]tools.SubType{}
		for name, st := range c.SubTypes {
			o.SubTypes[name] = tools.SubType(st)
		}
	}
	var err error
	if c.BearerTokenFile != "" {
		if o.Auth.BearerToken, err = config.ReadToken(key+".bearer_token_file", c.BearerTokenFile, log); err != nil {
			return nil, err
		}
		redact(o.Auth.BearerToken)
	}
	if c.APIKeyFile != "" {
		if o.Auth.APIKey, err = config.ReadToken(key+".api_key_file", c.APIKeyFile, log); err != nil {
			return nil, err
		}
		o.Auth.APIKeyScheme = c.APIKeyScheme
		o.Auth.APIKeyHeader = c.APIKeyHeader
		redact(o.Auth.APIKey)
	}
	return &openAPISource{cfg: c, key: key, opts: o}, nil
}

func (s *openAPISource) String() string { return s.key + " " + s.cfg.Spec }

// watch: loaded once; a URL is retried until it is.
func (s *openAPISource) watch() (time.Duration, time.Duration) { return 0, 0 }

func (s *openAPISource) load(ctx context.Context) ([]*tools.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	set, err := openapi.Load(ctx, s.cfg.Spec, s.opts)
	if err != nil {
		return nil, err
	}
	for _, sk := range set.Skipped() {
		s.opts.Logger.Warn("an operation cannot be a device tool; left out", "operation", sk.Method+" "+sk.Path, "reason", sk.Reason)
	}
	ts := set.Tools()
	for i, t := range ts {
		if s.cfg.Prefix != "" {
			nt := *t
			nt.Name = s.cfg.Prefix + t.Name
			ts[i] = &nt
		}
	}
	return ts, nil
}

func (s *openAPISource) close() {}
