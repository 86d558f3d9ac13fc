package transport

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"
)

// Defaults for the zero values of DialOptions and AcceptOptions.
const (
	DefaultReadLimit        = 1 << 20 // bytes per message
	DefaultPingInterval     = 20 * time.Second
	DefaultPingTimeout      = 10 * time.Second
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultWriteTimeout     = 10 * time.Second
)

// DialOptions configures Dial. A nil *DialOptions means all defaults. Dial
// copies the options; it never changes the caller's struct.
type DialOptions struct {
	// Header holds extra handshake headers (Device-Id, Client-Id,
	// User-Agent), set by the caller.
	Header http.Header
	// Token, when not empty, is sent as "Authorization: Bearer <token>". It
	// never appears in a log line or an error message.
	Token string
	// TLSConfig is used for wss:// URLs; nil means the system roots and full
	// verification. The package reads no files: the caller builds it
	// (internal/config from the configured CA and client certificate).
	TLSConfig *tls.Config
	// ReadLimit is the largest message accepted, in bytes; 0 means
	// DefaultReadLimit. A larger message closes the connection (1009).
	ReadLimit int64
	// PingInterval is the time between keepalive pings; 0 means
	// DefaultPingInterval, a negative value disables keepalive.
	PingInterval time.Duration
	// PingTimeout is how long a pong may take before the line is declared
	// dead; 0 means DefaultPingTimeout.
	PingTimeout time.Duration
	// HandshakeTimeout bounds the TCP, TLS and WebSocket handshakes; 0 means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// WriteTimeout is how long writes may be pending without one
	// completing before the line is declared stuck and closed; 0 means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// Logger receives the transport's logs; nil discards them.
	Logger *slog.Logger
}

// AcceptOptions configures Accept, the server side. A nil *AcceptOptions
// means all defaults; the fields mean what they mean in DialOptions.
type AcceptOptions struct {
	ReadLimit    int64
	PingInterval time.Duration
	PingTimeout  time.Duration
	WriteTimeout time.Duration
	Logger       *slog.Logger
}

// streamConfig is what a Stream needs, defaults filled in.
type streamConfig struct {
	readLimit    int64
	pingInterval time.Duration // <= 0: no keepalive
	pingTimeout  time.Duration
	writeTimeout time.Duration
	logger       *slog.Logger
}

func newStreamConfig(readLimit int64, pingInterval, pingTimeout, writeTimeout time.Duration, logger *slog.Logger) streamConfig {
	c := streamConfig{
		readLimit:    readLimit,
		pingInterval: pingInterval,
		pingTimeout:  pingTimeout,
		writeTimeout: writeTimeout,
		logger:       logger,
	}
	if c.readLimit <= 0 {
		c.readLimit = DefaultReadLimit
	}
	switch {
	case c.pingInterval == 0:
		c.pingInterval = DefaultPingInterval
	case c.pingInterval < 0:
		c.pingInterval = 0
	}
	if c.pingTimeout <= 0 {
		c.pingTimeout = DefaultPingTimeout
	}
	if c.writeTimeout <= 0 {
		c.writeTimeout = DefaultWriteTimeout
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	c.logger = c.logger.With("component", "transport")
	return c
}
