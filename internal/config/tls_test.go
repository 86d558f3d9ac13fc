package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devicectl/devicectl/internal/testing/logbuf"
	"github.com/devicectl/devicectl/internal/testing/testca"
)

// TestTLSConfigHandshakes builds configs from files and completes (or fails) a TLS handshake
// with them, against a server whose certificate comes from a throwaway CA.
func TestTLSConfigHandshakes(t *testing.T) {
	ca := testca.New(t, "devicectl-test")
	other := testca.New(t, "someone-else")
	serverCert, _, _ := ca.Issue(t, "server", x509.ExtKeyUsageServerAuth, "127.0.0.1", "agent.test")
	_, certFile, keyFile := ca.Issue(t, "device", x509.ExtKeyUsageClientAuth)

	peers := make(chan string, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn := ""
		if len(r.TLS.PeerCertificates) > 0 {
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		peers <- cn
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: x509.NewCertPool()}
	srv.TLS.ClientCAs.AddCert(ca.Cert)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point here
	srv.StartTLS()
	defer srv.Close()
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/"

	for _, tc := range []struct {
		name    string
		c       ServerConfig
		peer    string           // the client certificate the server sees
		wantErr func(error) bool // nil: the handshake must work
	}{
		{name: "configured CA", c: ServerConfig{CAFile: ca.File}},
		{name: "server name", c: ServerConfig{CAFile: ca.File, ServerName: "agent.test"}},
		{name: "unknown CA", c: ServerConfig{CAFile: other.File}, wantErr: isErr[x509.UnknownAuthorityError]},
		{name: "system roots", c: ServerConfig{}, wantErr: isErr[x509.UnknownAuthorityError]},
		{name: "hostname mismatch", c: ServerConfig{CAFile: ca.File, ServerName: "elsewhere.test"}, wantErr: isErr[x509.HostnameError]},
		{name: "insecure", c: ServerConfig{InsecureSkipVerify: true}},
		{name: "mutual TLS", c: ServerConfig{CAFile: ca.File, CertFile: certFile, KeyFile: keyFile}, peer: "device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.URL = url
			cfg, err := TLSConfig(tc.c, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatalf("TLSConfig: %v", err)
			}
			if cfg.MinVersion != tls.VersionTLS12 {
				t.Errorf("MinVersion %x, want TLS 1.2", cfg.MinVersion)
			}
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
			resp, err := c.Get(srv.URL)
			if tc.wantErr != nil {
				if err == nil {
					resp.Body.Close()
					t.Fatal("the handshake succeeded")
				}
				if !tc.wantErr(err) {
					t.Errorf("unexpected error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			c.CloseIdleConnections()
			if cn := <-peers; cn != tc.peer {
				t.Errorf("the server saw client certificate %q, want %q", cn, tc.peer)
			}
		})
	}
}

func isErr[E error](err error) bool {
	var e E
	return errors.As(err, &e)
}

// TestTLSConfigErrors checks that every error is on the key at fault and names the file and the
// problem.
func TestTLSConfigErrors(t *testing.T) {
	ca := testca.New(t, "ca")
	_, certFile, keyFile := ca.Issue(t, "device", x509.ExtKeyUsageClientAuth)
	_, _, otherKey := ca.Issue(t, "other", x509.ExtKeyUsageClientAuth)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	dir := t.TempDir()

	for _, tc := range []struct {
		name string
		c    ServerConfig
		key  string
		want []string // substrings of the error
	}{
		{"CA file missing", ServerConfig{CAFile: missing}, "server.ca_file", []string{missing, "no such file"}},
		{"CA file not PEM", ServerConfig{CAFile: garbage}, "server.ca_file", []string{garbage, "no PEM certificate"}},
		{"CA file a directory", ServerConfig{CAFile: dir}, "server.ca_file", []string{dir, "not a regular file"}},
		{"certificate without key", ServerConfig{CertFile: certFile}, "server.key_file", []string{certFile, "without its key file"}},
		{"key without certificate", ServerConfig{KeyFile: keyFile}, "server.cert_file", []string{keyFile, "without its certificate file"}},
		{"certificate file missing", ServerConfig{CertFile: missing, KeyFile: keyFile}, "server.cert_file", []string{missing, "no such file"}},
		{"key file missing", ServerConfig{CertFile: certFile, KeyFile: missing}, "server.key_file", []string{missing, "no such file"}},
		{"key not PEM", ServerConfig{CertFile: certFile, KeyFile: garbage}, "server.cert_file", []string{certFile, garbage, "PEM"}},
		{"key of another certificate", ServerConfig{CertFile: certFile, KeyFile: otherKey}, "server.cert_file", []string{certFile, otherKey, "does not match"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.URL = "wss://agent.example/"
			cfg, err := TLSConfig(tc.c, slog.New(slog.DiscardHandler))
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key {
				t.Fatalf("TLSConfig() = %v, %v; want an *Error on %s", cfg, err, tc.key)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A ws:// server takes no TLS settings: they are ignored, with a warning when some are set.
func TestTLSConfigPlainWebSocket(t *testing.T) {
	var logs logbuf.Buffer
	for _, c := range []ServerConfig{{URL: "ws://agent.example/"}, {URL: "ws://agent.example/", CAFile: "/nonexistent/ca.pem"}} {
		cfg, err := TLSConfig(c, logs.Logger())
		if cfg != nil || err != nil {
			t.Errorf("TLSConfig(%+v) = %v, %v; want nil, nil", c, cfg, err)
		}
	}
	if n := logs.Count("level=WARN", "not wss://"); n != 1 {
		t.Errorf("%d warnings, want 1 (for the config with TLS settings); log:\n%s", n, logs.String())
	}
}
