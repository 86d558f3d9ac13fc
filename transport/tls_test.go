package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/devicectl/devicectl/internal/testing/testca"
)

// TestTLS dials a wss:// server whose certificate comes from a throwaway CA.
func TestTLS(t *testing.T) {
	ca := testca.New(t, "devicectl-test")
	other := testca.New(t, "someone-else")
	serverCert, _, _ := ca.Issue(t, "server", x509.ExtKeyUsageServerAuth, "127.0.0.1", "agent.test")
	_, clientCertFile, clientKeyFile := ca.Issue(t, "device", x509.ExtKeyUsageClientAuth)
	_, strangerCertFile, strangerKeyFile := other.Issue(t, "stranger", x509.ExtKeyUsageClientAuth)

	tests := []struct {
		name    string
		mTLS    bool // the server demands a client certificate from ca
		opts    TLSOptions
		wantErr func(error) bool // nil: the dial must work
	}{
		{name: "configured CA", opts: TLSOptions{CAFile: ca.File}},
		{name: "server name", opts: TLSOptions{CAFile: ca.File, ServerName: "agent.test"}},
		{name: "unknown CA", opts: TLSOptions{CAFile: other.File}, wantErr: isErr[x509.UnknownAuthorityError]},
		{name: "system roots", opts: TLSOptions{}, wantErr: isErr[x509.UnknownAuthorityError]},
		{name: "hostname mismatch", opts: TLSOptions{CAFile: ca.File, ServerName: "elsewhere.test"}, wantErr: isErr[x509.HostnameError]},
		{name: "mutual TLS", mTLS: true, opts: TLSOptions{CAFile: ca.File, CertFile: clientCertFile, KeyFile: clientKeyFile}},
		{name: "mutual TLS without a client certificate", mTLS: true, opts: TLSOptions{CAFile: ca.File}, wantErr: isTLSAlert},
		{name: "mutual TLS with a stranger's certificate", mTLS: true,
			opts: TLSOptions{CAFile: ca.File, CertFile: strangerCertFile, KeyFile: strangerKeyFile}, wantErr: isTLSAlert},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			peers := make(chan string, 1)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if len(r.TLS.PeerCertificates) > 0 {
					peers <- r.TLS.PeerCertificates[0].Subject.CommonName
				}
				c, err := websocket.Accept(w, r, nil)
				if err != nil {
					return
				}
				c.Close(websocket.StatusNormalClosure, "")
			}))
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}}
			if tc.mTLS {
				srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
				srv.TLS.ClientCAs = x509.NewCertPool()
				srv.TLS.ClientCAs.AddCert(ca.Cert)
			}
			srv.Config.ErrorLog = quietLog() // refused handshakes are the point here
			srv.StartTLS()
			defer srv.Close()

			cfg, err := tc.opts.Config()
			if err != nil {
				t.Fatalf("Config: %v", err)
			}
			s, err := Dial(t.Context(), "wss"+strings.TrimPrefix(srv.URL, "https")+"/", &DialOptions{TLSConfig: cfg})
			if tc.wantErr != nil {
				if err == nil {
					s.Close()
					t.Fatal("Dial succeeded")
				}
				t.Logf("Dial: %v", err)
				if !tc.wantErr(err) {
					t.Errorf("Dial: unexpected error %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if tc.mTLS {
				if cn := <-peers; cn != "device" {
					t.Errorf("server saw client certificate %q, want device", cn)
				}
			}
		})
	}
}

func isErr[E error](err error) bool {
	var e E
	return errors.As(err, &e)
}

// isTLSAlert reports a handshake the server refused (with TLS 1.3 the client
// learns it from an alert when it reads the response).
func isTLSAlert(err error) bool {
	var alert tls.AlertError
	var remote *net.OpError
	return errors.As(err, &alert) || errors.As(err, &remote) && strings.Contains(err.Error(), "remote error: tls")
}

// TestInsecureSkipVerifyWarnsEveryDial checks that turning verification off
// connects to an unknown CA's server and warns on every connect.
func TestInsecureSkipVerifyWarnsEveryDial(t *testing.T) {
	leakCheck(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	cfg, err := (&TLSOptions{InsecureSkipVerify: true}).Config()
	if err != nil {
		t.Fatal(err)
	}
	logger, logs := newTestLogger()
	for range 2 {
		s, err := Dial(t.Context(), "wss"+strings.TrimPrefix(srv.URL, "https")+"/", &DialOptions{TLSConfig: cfg, Logger: logger})
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		s.Close()
	}
	if n := logs.Count("level=WARN", "verification is disabled"); n != 2 {
		t.Errorf("%d warnings for 2 dials; log:\n%s", n, logs)
	}
}

// TestTLSOptionsErrors checks every error names the file and the problem.
func TestTLSOptionsErrors(t *testing.T) {
	ca := testca.New(t, "ca")
	_, certFile, keyFile := ca.Issue(t, "device", x509.ExtKeyUsageClientAuth)
	_, _, otherKey := ca.Issue(t, "other", x509.ExtKeyUsageClientAuth)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")

	for _, tc := range []struct {
		name string
		opts TLSOptions
		want []string // substrings of the error
	}{
		{"CA file missing", TLSOptions{CAFile: missing}, []string{missing, "no such file"}},
		{"CA file not PEM", TLSOptions{CAFile: garbage}, []string{garbage, "no PEM certificate"}},
		{"certificate without key", TLSOptions{CertFile: certFile}, []string{certFile, "without its key file"}},
		{"key without certificate", TLSOptions{KeyFile: keyFile}, []string{keyFile, "without its certificate file"}},
		{"certificate file missing", TLSOptions{CertFile: missing, KeyFile: keyFile}, []string{missing, "no such file"}},
		{"key file missing", TLSOptions{CertFile: certFile, KeyFile: missing}, []string{missing, "no such file"}},
		{"key not PEM", TLSOptions{CertFile: certFile, KeyFile: garbage}, []string{certFile, garbage, "PEM"}},
		{"key of another certificate", TLSOptions{CertFile: certFile, KeyFile: otherKey}, []string{certFile, otherKey, "does not match"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.opts.Config()
			if err == nil {
				t.Fatalf("Config() = %v, want an error", cfg)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}

	t.Run("nil and zero", func(t *testing.T) {
		for _, o := range []*TLSOptions{nil, {}} {
			cfg, err := o.Config()
			if err != nil || cfg.InsecureSkipVerify || cfg.RootCAs != nil || cfg.MinVersion != tls.VersionTLS12 {
				t.Errorf("Config() = %+v, %v; want verification with system roots", cfg, err)
			}
		}
	})
}

// quietLog discards the http.Server's own log of refused handshakes.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
