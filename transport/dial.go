package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// Dial opens a WebSocket to url (ws:// or wss://) and returns the Stream over
// it. ctx bounds the handshake only (as does HandshakeTimeout); once Dial has
// returned, cancelling ctx does not affect the Stream.
//
// The handshake sends opts.Header plus, when opts.Token is set,
// "Authorization: Bearer <token>". The token never appears in a log line or an
// error message. With TLSConfig.InsecureSkipVerify set, every Dial logs a
// warning: the server's identity is not checked.
func Dial(ctx context.Context, url string, opts *DialOptions) (*Stream, error) {
	var o DialOptions
	if opts != nil {
		o = *opts
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	cfg := newStreamConfig(o.ReadLimit, o.PingInterval, o.PingTimeout, o.WriteTimeout, o.Logger)

	where, err := checkURL(url)
	if err != nil {
		return nil, redact(err, o.Token)
	}
	log := cfg.logger.With("url", where)
	if o.TLSConfig != nil && o.TLSConfig.InsecureSkipVerify {
		log.Warn("TLS certificate verification is disabled: the server's identity is not checked")
	}

	header := o.Header.Clone()
	if header == nil {
		header = make(http.Header)
	}
	if o.Token != "" {
		header.Set("Authorization", "Bearer "+o.Token)
	}

	// A transport of our own: the TLS settings stay ours, and nothing is left
	// pooled after the handshake (the upgraded connection is taken out of
	// the transport).
	var coalesce *coalescingConn
	dialer := &net.Dialer{KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			coalesce = &coalescingConn{Conn: c}
			return coalesce, nil
		},
		TLSClientConfig:    o.TLSConfig.Clone(),
		DisableCompression: true,
	}
	defer tr.CloseIdleConnections()

	hctx, cancel := context.WithTimeout(ctx, o.HandshakeTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(hctx, url, &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: tr},
		HTTPHeader: header,
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			// The server was reached and said no: name its answer, so a refused token
			// (401, 403) reads as one rather than as a broken line.
			err = &HandshakeError{StatusCode: resp.StatusCode, Status: resp.Status}
		} else if ue := (*neturl.Error)(nil); errors.As(err, &ue) {
			// The server was not reached. Say why (e.g. connection refused) and no more:
			// the layers above it only repeat the URL, once as http://.
			err = ue.Err
		}
		err = fmt.Errorf("connecting to %s: %w", where, err)
		log.Debug("dial failed", "err", redact(err, o.Token))
		return nil, redact(err, o.Token)
	}
	log.Debug("connected")
	// The handshake's answer was the last read: what is written next goes out at once, until
	// the Stream's reader reads.
	if err := coalesce.flush(); err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("connecting to %s: %w", where, err)
	}
	s := newStream(conn, cfg, log)
	s.coalesce = coalesce
	return s, nil
}

// HandshakeError is a server's refusal of the WebSocket handshake: it answered with an HTTP status
// other than 101 Switching Protocols (401 or 403 for a token it does not accept, 404 for a wrong
// path).
type HandshakeError struct {
	StatusCode int    // e.g. 401
	Status     string // e.g. "401 Unauthorized"
}

func (e *HandshakeError) Error() string {
	return "the server refused the WebSocket handshake: HTTP " + e.Status
}

// Accept upgrades an HTTP request to a WebSocket and returns the Stream over
// it: the server side of Dial. On failure Accept has already written an HTTP
// error response. Cross-origin requests from browsers are refused
// (coder/websocket's default); devices send no Origin header. The line reads
// and writes through buffers smaller than net/http's (hijack.go).
func Accept(w http.ResponseWriter, r *http.Request, opts *AcceptOptions) (*Stream, error) {
	var o AcceptOptions
	if opts != nil {
		o = *opts
	}
	cfg := newStreamConfig(o.ReadLimit, o.PingInterval, o.PingTimeout, o.WriteTimeout, o.Logger)
	conn, err := websocket.Accept(smallBuffers{w}, r, nil)
	if err != nil {
		return nil, fmt.Errorf("transport: accept from %s: %w", r.RemoteAddr, err)
	}
	log := cfg.logger.With("remote", r.RemoteAddr)
	log.Debug("accepted")
	return newStream(conn, cfg, log), nil
}

// checkURL validates a ws:// or wss:// URL and returns the form that is safe
// to log: scheme, host and path, without user info or query.
func checkURL(rawURL string) (string, error) {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err // ue.URL would repeat the URL, secrets included
		}
		return "", fmt.Errorf("transport: bad URL: %w", err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return "", fmt.Errorf("transport: bad URL scheme %q: want ws or wss", u.Scheme)
	}
	if u.Host == "" {
		return "", errors.New("transport: bad URL: no host")
	}
	safe := neturl.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return safe.String(), nil
}

// redact hides secret in err's message, for the day a server echoes the
// Authorization header in an error or a caller puts the token in the URL too.
// errors.Is and errors.As still see through it.
func redact(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), secret, "[REDACTED]"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
