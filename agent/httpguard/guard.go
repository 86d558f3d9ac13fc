package httpguard

import (
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/devicectl/devicectl/internal/bearer"
)

// Options say what a Guard lets through. New copies them.
type Options struct {
	// Hosts are the server's names beyond IP literals and localhost: "name" for any port, or
	// "name:port". Case and a final dot do not matter.
	Hosts []string
	// Origins are the browser origins ("scheme://host[:port]") allowed to call the server from
	// their pages; the Guard answers CORS for them.
	Origins []string
	// Token is the server's bearer token; a request that carries it is not held to the Origin
	// rule. "": no request is exempt.
	Token string
	// Strict reports whether the Origin rule holds for r whatever its method (WebSocket
	// handshakes always are). nil: none beyond them.
	Strict func(r *http.Request) bool
	// HostsKey and OriginsKey are the configuration keys that allow more hosts and origins, named
	// in refusals; "" names the Options fields.
	HostsKey, OriginsKey string
	// Logger gets a warning per refusal; nil discards them.
	Logger *slog.Logger
}

// Guard checks requests' Host, Origin and Content-Type (see the package doc). It is immutable
// after New.
type Guard struct {
	hosts      []hostPort
	origins    map[string]bool // normalised by normOrigin
	token      string
	strict     func(*http.Request) bool
	hostsKey   string
	originsKey string
	log        *slog.Logger
}

// hostPort is an allowed name; port "" is any port.
type hostPort struct{ host, port string }

// New checks o's hosts and origins and returns the Guard.
func New(o *Options) (*Guard, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.HostsKey == "" {
		opts.HostsKey = "httpguard.Options.Hosts"
	}
	if opts.OriginsKey == "" {
		opts.OriginsKey = "httpguard.Options.Origins"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Guard{
		origins: make(map[string]bool, len(opts.Origins)), token: opts.Token, strict: opts.Strict,
		hostsKey: opts.HostsKey, originsKey: opts.OriginsKey, log: opts.Logger.With("component", "httpguard"),
	}
	for _, h := range opts.Hosts {
		hp, err := parseAllowedHost(h)
		if err != nil {
			return nil, &OptionError{Key: opts.HostsKey, Err: err}
		}
		g.hosts = append(g.hosts, hp)
	}
	for _, o := range opts.Origins {
		n, err := normOrigin(o)
		if err != nil {
			return nil, &OptionError{Key: opts.OriginsKey, Err: err}
		}
		g.origins[n] = true
	}
	return g, nil
}

// OptionError is a host or origin New cannot read; Key is Options.HostsKey or OriginsKey.
type OptionError struct {
	Key string
	Err error
}

func (e *OptionError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// parseAllowedHost reads "name" or "name:port" (IPv6 in brackets).
func parseAllowedHost(s string) (hostPort, error) {
	host, port := splitHost(s)
	if _, err := strconv.ParseUint(port, 10, 16); (err != nil && port != "") || host == "" || strings.ContainsAny(host, "/@?# ") {
		return hostPort{}, fmt.Errorf("%q is not a host name or host:port (e.g. robot.lan or robot.lan:8765)", s)
	}
	return hostPort{host, port}, nil
}

// splitHost splits a Host header's value into its lower-case name, without brackets or a final
// dot, and its port ("" when it has none).
func splitHost(s string) (host, port string) {
	host = s
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(strings.ToLower(host), "."), port
}

// normOrigin returns an origin as browsers write it: lower-case scheme and host, no default port.
func normOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	bad := err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != ""
	if bad {
		return "", fmt.Errorf("%q is not an origin, scheme://host[:port] (e.g. https://dashboard.example)", s)
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" && p != defaultPort(scheme) {
		host += ":" + p
	}
	return scheme + "://" + host, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// Refusal is why a request was refused: the HTTP status and the text answered.
type Refusal struct {
	Status int
	Reason string // what, naming the key that would allow it
}

func (r *Refusal) Error() string { return r.Reason }

// Handler returns next behind the Guard: a refused request gets the Refusal's status and text,
// a CORS preflight from an allowed origin is answered here, and a request from an allowed
// origin gets the CORS headers before next sees it.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := g.Check(r)
		if err != nil {
			g.log.Warn("refused request", "status", err.Status, "reason", err.Reason, "method", r.Method,
				"path", r.URL.Path, "host", clip(r.Host), "origin", clip(r.Header.Get("Origin")), "remote", r.RemoteAddr)
			http.Error(w, err.Reason, err.Status)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && g.allowedOrigin(o) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", o)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
			if isPreflight(r) {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
				if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" && validTokens(rh) {
					h.Set("Access-Control-Allow-Headers", rh)
				}
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// exposedHeaders are the response headers a page from an allowed origin may read: MCP's session
// and version, and why a request was unauthorized.
const exposedHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"

// Check returns why r is refused, or nil.
func (g *Guard) Check(r *http.Request) *Refusal {
	if !g.ownHost(r.Host) {
		name, _ := splitHost(r.Host)
		return &Refusal{http.StatusMisdirectedRequest, fmt.Sprintf(
			"this server does not answer to Host %q (DNS rebinding is refused): if clients reach it by that name, add %s to %s",
			clip(r.Host), clip(name), g.hostsKey)}
	}
	if isPreflight(r) {
		if o := r.Header.Get("Origin"); !g.allowedOrigin(o) {
			return g.foreign(o)
		}
		return nil
	}
	if !safeMethod(r.Method) || IsWebSocket(r) || (g.strict != nil && g.strict(r)) {
		if ref := g.checkOrigin(r); ref != nil {
			return ref
		}
	}
	if !safeMethod(r.Method) && r.ContentLength != 0 && !isJSON(r.Header) {
		return &Refusal{http.StatusUnsupportedMediaType, fmt.Sprintf(
			"this server takes only JSON bodies: send Content-Type: application/json, not %q", clip(r.Header.Get("Content-Type")))}
	}
	return nil
}

// ownHost reports whether host (a Host header) names this server. An empty one (HTTP/1.0) is
// no browser's.
func (g *Guard) ownHost(host string) bool {
	if host == "" {
		return true
	}
	name, port := splitHost(host)
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	return slices.ContainsFunc(g.hosts, func(a hostPort) bool {
		return a.host == name && (a.port == "" || a.port == port)
	})
}

// checkOrigin applies the Origin rule (the algorithm of http.CrossOriginProtection, with the
// allowed origins and the token as the exceptions).
func (g *Guard) checkOrigin(r *http.Request) *Refusal {
	if g.token != "" && bearer.Matches(r, g.token) {
		return nil
	}
	origins := r.Header.Values("Origin")
	if len(origins) > 1 {
		return g.foreign(strings.Join(origins, ", "))
	}
	origin := r.Header.Get("Origin")
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none": // the page itself, or the user typing an address
		return nil
	case "":
		if origin == "" || g.sameOrigin(origin, r.Host) {
			return nil
		}
	}
	if origin != "" && g.allowedOrigin(origin) {
		return nil
	}
	return g.foreign(origin)
}

func (g *Guard) foreign(origin string) *Refusal {
	if origin == "" {
		origin = "another site (Sec-Fetch-Site)"
	}
	return &Refusal{http.StatusForbidden, fmt.Sprintf(
		"requests from web pages at %q are refused: if that page may call this server, add its origin to %s",
		clip(origin), g.originsKey)}
}

// sameOrigin reports whether origin's host and port are the Host's. Host does not say the
// scheme, and behind a proxy may omit the port: then the names decide.
func (g *Guard) sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	oname, oport := splitHost(u.Host)
	if oport == "" {
		oport = defaultPort(strings.ToLower(u.Scheme))
	}
	name, port := splitHost(host)
	return oname == name && (port == "" || port == oport)
}

func (g *Guard) allowedOrigin(origin string) bool {
	if len(g.origins) == 0 {
		return false
	}
	n, err := normOrigin(origin)
	return err == nil && g.origins[n]
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// isPreflight reports whether r is a CORS preflight.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// isJSON reports whether h declares one application/json body, its charset (if any) UTF-8.
func isJSON(h http.Header) bool {
	if len(h.Values("Content-Type")) != 1 {
		return false
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// IsWebSocket reports whether r asks to upgrade to a WebSocket (RFC 6455 section 4.1): the guard
// holds such a request to the rules of a state-changing one, and a server routes it by the same
// test.
func IsWebSocket(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
}

// headerHas reports whether the comma-separated header holds token, in any case.
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}

// validTokens reports whether s is a comma-separated list of header names, safe to echo.
func validTokens(s string) bool {
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" || strings.ContainsFunc(part, func(c rune) bool {
			return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c))
		}) {
			return false
		}
	}
	return true
}

// clip keeps what a client sent short and on one line in answers and logs.
func clip(s string) string {
	const max = 100
	s = strings.Map(func(c rune) rune {
		if c < ' ' || c == 0x7f {
			return -1
		}
		return c
	}, s)
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}

// MachineNames returns the names a LAN reaches this machine by, from its host name (as
// os.Hostname gives it): the name, its first label, and that label under .local (mDNS).
func MachineNames(hostname string) []string {
	name := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(hostname)), ".")
	if name == "" || strings.ContainsAny(name, ":/@?# ") { // no name a Host header carries
		return nil
	}
	short, _, _ := strings.Cut(name, ".")
	names := []string{name}
	for _, n := range []string{short, short + ".local"} {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}
