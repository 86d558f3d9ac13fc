package doctor

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/devicectl/devicectl/protocol"
	"github.com/devicectl/devicectl/transport"
)

// Server is the way to the agent server that Server checks: what run would dial with.
type Server struct {
	URL              string // ws:// or wss://; "" fails the check with a remedy
	MAC              string // sent as Device-Id
	Token            string // sent as a bearer token, if set
	UserAgent        string
	TLS              *tls.Config // nil: the defaults (verified against the system's roots)
	HandshakeTimeout time.Duration
	// TokenRemedy is what to do about a token the server refuses, e.g. which file or variable
	// it came from.
	TokenRemedy string
	// Register, after the handshake, registers MAC with no tools as ClientID (the device's
	// Client-Id; "" sends none) and leaves, to show whether the server accepts the device and
	// if not why. A device connected as that Client-Id loses its line for a moment.
	Register bool
	ClientID string
	// Voice asks the server, after the handshake, whether it takes what the device hears
	// (mcp/user/text): the device listens (voice.listen is not off).
	Voice bool
}

// CheckServer walks the way to the server: name, port, certificate (each skipped through a
// proxy, which the handshake checks end to end), then the WebSocket handshake with the device's
// headers and token, then (Register) a registration. A failed step skips the steps that need it.
func CheckServer(ctx context.Context, s *Server) []Result {
	if s.URL == "" {
		return []Result{{Name: "server", Err: errors.New("server.url is not set"), Remedy: "set server.url in the config file, or pass --server"}}
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return []Result{{Name: "server", Err: err, Remedy: "server.url must be a ws:// or wss:// URL"}}
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"ws": "80", "wss": "443"}[u.Scheme]
	}
	var results []Result
	add := func(r Result) bool {
		results = append(results, r)
		return r.Err == nil
	}
	dctx, cancel := context.WithTimeout(ctx, s.HandshakeTimeout)
	defer cancel()
	// Through a proxy, as run would go, the name, port and certificate are the proxy's business
	// until the handshake, which checks them end to end.
	if proxy := ProxyFor(u); proxy != nil {
		add(Result{Name: "proxy", Detail: "through " + proxy.Redacted() + " (from the environment); the handshake below checks the way"})
	} else if !checkDirect(dctx, host, port, u.Scheme == "wss", s.TLS, add) {
		return results
	}
	hs := checkHandshake(ctx, s)
	results = append(results, hs...)
	if !s.Register || hs[0].Err != nil {
		return results
	}
	return append(results, checkRegistration(ctx, s))
}

// ProxyFor returns the proxy the environment names for u (HTTPS_PROXY for wss, HTTP_PROXY for
// ws, NO_PROXY honoured), as transport.Dial will use it; nil for none.
func ProxyFor(u *url.URL) *url.URL {
	pu := *u
	pu.Scheme = map[string]string{"ws": "http", "wss": "https"}[u.Scheme]
	p, err := http.ProxyFromEnvironment(&http.Request{URL: &pu})
	if err != nil {
		return nil
	}
	return p
}

// checkDirect checks the server's name, port and, for wss, certificate, reporting each through
// add, which says whether the next step may run.
func checkDirect(dctx context.Context, host, port string, secure bool, tlsConf *tls.Config, add func(Result) bool) bool {
	if net.ParseIP(host) == nil {
		addrs, err := net.DefaultResolver.LookupHost(dctx, host)
		if !add(Result{Name: "dns", Detail: host + " is " + strings.Join(addrs, ", "), Err: err,
			Remedy: "check the host name in server.url and the board's DNS (/etc/resolv.conf)"}) {
			return false
		}
	}

	addr := net.JoinHostPort(host, port)
	start := time.Now()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	if !add(Result{Name: "tcp", Detail: fmt.Sprintf("%s answers (%s)", addr, time.Since(start).Round(time.Millisecond)), Err: err,
		Remedy: "is the server running and listening on " + addr + "? is a firewall in the way?"}) {
		return false
	}
	if !secure {
		conn.Close()
		return true
	}
	tc := &tls.Config{}
	if tlsConf != nil {
		tc = tlsConf.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = host
	}
	tconn := tls.Client(conn, tc)
	err = tconn.HandshakeContext(dctx)
	r := Result{Name: "tls", Err: err,
		Remedy: "is the server's certificate for " + tc.ServerName + "? set server.ca_file to the CA that signed it, or server.server_name to the name it carries"}
	// A server that answers TLS with plain HTTP is not a certificate problem: the scheme is wrong.
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		r.Remedy = "the server at " + net.JoinHostPort(host, port) + " speaks plain HTTP, not TLS: use ws:// in server.url"
	}
	if err == nil {
		r.Detail = tlsDetail(tconn.ConnectionState())
		if tc.InsecureSkipVerify {
			r.Warn = "connected WITHOUT verifying the certificate (server.insecure_skip_verify)"
			r.Remedy = "set server.ca_file to the CA that signed the server's certificate and turn server.insecure_skip_verify off"
		}
	}
	tconn.Close()
	return add(r)
}

// checkHandshake opens the WebSocket with the device's headers and token, asks about voice when
// s.Voice, and closes it.
func checkHandshake(ctx context.Context, s *Server) []Result {
	header := http.Header{}
	header.Set("Device-Id", s.MAC)
	header.Set("User-Agent", s.UserAgent)
	stream, err := transport.Dial(ctx, s.URL, &transport.DialOptions{
		Header:           header,
		Token:            s.Token,
		TLSConfig:        s.TLS,
		HandshakeTimeout: s.HandshakeTimeout,
		PingInterval:     -1,
	})
	r := Result{Name: "websocket", Detail: "the server accepts the device's handshake", Err: err,
		Remedy: "is server.url's path the server's device endpoint?"}
	var he *transport.HandshakeError
	if errors.As(err, &he) && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden) {
		if s.Token == "" {
			r.Remedy = "the server wants a token and none is configured: set server.token_file (or DEVICECTL_TOKEN) to a token the server accepts"
		} else {
			r.Remedy = "the server refused the token: " + s.TokenRemedy
		}
	}
	if err != nil {
		return []Result{r}
	}
	defer stream.Close()
	if !s.Voice {
		return []Result{r}
	}
	return []Result{r, checkVoice(ctx, stream, s.HandshakeTimeout)}
}

// checkVoice asks whether the server takes mcp/user/text, without registering (doctor never
// does) and without starting a turn: with params that carry no text, a server that takes voice
// answers -32602 or -32600 (register first), and one of seed 002 answers -32601.
func checkVoice(ctx context.Context, stream *transport.Stream, timeout time.Duration) Result {
	r := Result{Name: "voice", Remedy: "run an agent server that takes voice (devicectl serve), or set voice.listen off"}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	id := json.RawMessage(`"doctor-voice"`)
	if err := stream.WriteRequest(id, protocol.MethodUserText, struct{}{}); err != nil {
		r.Warn = "could not ask the server about voice: " + err.Error()
		return r
	}
	read := make(chan *transport.Message, 1)
	go func() {
		defer close(read)
		for {
			m, err := stream.Read()
			if err != nil {
				return
			}
			if m.Kind == transport.KindResponse && string(m.ID) == string(id) {
				read <- m
				return
			}
		}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m, ok := <-read:
		switch {
		case !ok:
			r.Warn = fmt.Sprintf("%v: the server closed the line when asked %s", errNoVoice, protocol.MethodUserText)
		case m.Error != nil && m.Error.Code == protocol.CodeMethodNotFound:
			r.Warn = fmt.Sprintf("%v: it answers %s with -32601 (a seed-002 server); the device will not send what it hears", errNoVoice, protocol.MethodUserText)
		default:
			r.Detail = "the server takes " + protocol.MethodUserText
		}
	case <-t.C:
		r.Warn = fmt.Sprintf("no answer to %s within %s: the server may not take voice", protocol.MethodUserText, timeout)
	case <-ctx.Done():
		r.Warn = "stopped before the server answered about voice"
	}
	stream.Close() // ends the reader
	for range read {
	}
	return r
}

func tlsDetail(st tls.ConnectionState) string {
	if len(st.PeerCertificates) == 0 {
		return "verified"
	}
	leaf := st.PeerCertificates[0]
	return fmt.Sprintf("verified: %s, issued by %s, valid until %s", leaf.Subject.CommonName, leaf.Issuer.CommonName, leaf.NotAfter.Format("2006-01-02"))
}
